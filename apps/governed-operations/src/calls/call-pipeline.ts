import { Inject, Injectable } from '@nestjs/common';
import { BusClient, RequestContexts } from '@apphost/bus';
import {
  AppHostError,
  CatalogClassifyBatch,
  ConnCallTool,
  ConnListTools,
  LifecycleAppendEvents,
  LifecycleGetSession,
  RegistryGetProfile,
  RegistryGetToolset,
  viewPolicyOf,
  type AppendProvenance,
  type BoundToolHandle,
  type EventWidget,
  type LedgerEventInput,
  type Principal,
  type RequireConfirmation,
  type ResponseOf,
  type SealedEnvelope,
  type SessionKey,
  type ToolBatchFunctionResponse,
  type ToolsetSelection,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { projectForModel, validateToolResult, type ValidToolResult } from '@apphost/policy';
import { FAULT_POINTS, type FaultPoints, type Logger } from '@apphost/runtime';
import { SealedResultClient } from '@apphost/sealed-results';
import { describeFailure, driftOf, errorResponse, type PlannedCall } from '../tool-batches/batch-plan';
import type { BatchConfig } from '../governed.config';
import { retryWithinDeadline } from './deadline-retry';
import { SealedCommits } from './sealed-commits';
import type { ExecutionMark } from './outcome-classification';
import type { GovernedFaultPoint } from '../governed.faults';
import { BATCH_CONFIG, BATCH_LOGGER } from '../governed.tokens';
import { ProducingGenerations } from '../views/producing-generations';
import { USER_TURN } from '../conversation/invocation-origins';

type ToolsetStatusFacts = Pick<ResponseOf<typeof RegistryGetToolset>, 'toolsetId' | 'state' | 'bindingRevision' | 'profileId' | 'requireConfirmation'>;

/** What governed-operations needs of a toolset at admission: its binding (null: `MODEL_ONLY`) and its confirmation policy. */
export interface ToolsetFacts {
  bindingRevision: string | null;
  /** The profile the toolset is bound to (null: `MODEL_ONLY`). */
  profileId: string | null;
  requireConfirmation: RequireConfirmation;
}

/** One call after admission: the exact handle of the classification snapshot and its toolset's facts. */
export interface AdmittedCall {
  call: PlannedCall;
  handle: BoundToolHandle;
  uiAssociated: boolean;
  toolset: ToolsetFacts;
}

export interface CallContext {
  key: SessionKey;
  incarnation: number;
  invocationId: string;
  /** Unique per batch (or per decision): operation-instance ids of the calls derive from it. */
  operationId: string;
  snapshotId: string;
  /** Set once a call starts executing: errors after it say the tool ran. */
  mark: ExecutionMark;
  /** The invocation's provenance (absent: `user-turn`), carried into the permits the batch issues. */
  provenance?: AppendProvenance;
}

/** A generation's fresh listing, or why it could not be listed. */
export type Listing = { tools: Record<string, unknown>[] } | { failure: { code: string; message: string } };

/** What one call produced before the append: its function response and, for a UI result, its widget (and sealed record). */
export interface Outcome {
  response: ToolBatchFunctionResponse;
  widget?: EventWidget;
  recordId?: string;
}

export const AUTHOR = 'apphost';

/** The coordination store's longest TTL: a producing record never outlives it. */
const MAX_PRODUCER_TTL_MS = 24 * 3600 * 1000;

/** What the sealing retries leave of the deadline for the append and commits that follow. */
const APPEND_RESERVE_MS = 2_000;

export const EXECUTED_NOT_SEALED_MESSAGE =
  'The tool ran, but its result could not be stored for display, so it is not shown. Do not call it again unless the user asks.';

export function failedOutcome(call: PlannedCall, code: string, message: string): Outcome {
  return { response: { functionCallId: call.functionCallId, name: call.tool, response: errorResponse(code, message) } };
}

/** A call whose toolset could not be discovered: TOOLSET_UNAVAILABLE, naming the toolset and why it is unavailable. */
function unavailableOutcome(call: PlannedCall, toolsetIds: readonly string[], unavailable: ResponseOf<typeof CatalogClassifyBatch>['unavailable']): Outcome {
  const causes = unavailable.filter((u) => toolsetIds.includes(u.toolsetId));
  const message = `the tool's toolset is unavailable: ${causes.map((u) => u.message).join('; ')}`;
  const [first] = causes;
  const error = {
    ...(errorResponse('TOOLSET_UNAVAILABLE', message)['error'] as object),
    toolsetIds: [...toolsetIds],
    cause: first ? { code: first.code, reason: first.reason } : null,
  };
  return { response: { functionCallId: call.functionCallId, name: call.tool, response: { error } } };
}

/**
 * The steps every model-originated call goes through, whether it runs at batch admission or after the user
 * confirmed it: re-list, drift check, exactly one call on the handle's generation, validation, sealing (profile-bound
 * UI results) and the append + commit of the one event. Ordering is seal → append → commit, so a failure before
 * the append leaves only PENDING records no event references (GC collects them); the commits run after the reply,
 * and one that fails is repaired by the sealed store's recovery pass or by a `resolve` naming the event.
 */
@Injectable()
export class CallPipeline {
  private readonly sealed: SealedResultClient;
  /** Producing-record TTL by (immutable) profile id. */
  private readonly producerTtls = new Map<string, number>();

  constructor(
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(BATCH_CONFIG) private readonly config: BatchConfig,
    @Inject(BATCH_LOGGER) private readonly logger: Logger,
    @Inject(FAULT_POINTS) private readonly faults: FaultPoints<GovernedFaultPoint>,
    @Inject(ProducingGenerations) private readonly producers: ProducingGenerations,
    @Inject(SealedCommits) private readonly commits: SealedCommits,
  ) {
    this.sealed = new SealedResultClient(bus, { timeoutMs: config.storeTimeoutMs });
  }

  /** The session's current incarnation: everything a call does is scoped to it. NOT_FOUND unless the session is ACTIVE. */
  async activeIncarnation(key: SessionKey): Promise<number> {
    const view = await this.bus.request(LifecycleGetSession, { session: key });
    if (view.state !== 'ACTIVE') throw new AppHostError('NOT_FOUND', 'session not found');
    return view.incarnation;
  }

  /**
   * Admission: one catalog-policy classification snapshot of the calls (fresh two-class discovery), each call with
   * the exact handle it resolved to and its toolset's facts. A call outside the catalog fails the whole admission;
   * a call that may belong to a toolset catalog-policy could not discover is not admitted and fails alone
   * (`unreachable`: its TOOLSET_UNAVAILABLE outcome).
   */
  async admit(
    audience: { principal: Principal; key: SessionKey; incarnation: number },
    toolsets: ToolsetSelection[] | undefined,
    calls: readonly PlannedCall[],
  ): Promise<{ snapshot: ResponseOf<typeof CatalogClassifyBatch>; admitted: AdmittedCall[]; unreachable: Outcome[] }> {
    const snapshot = await this.bus.request(
      CatalogClassifyBatch,
      {
        principal: audience.principal,
        session: { key: audience.key, incarnation: audience.incarnation },
        ...(toolsets ? { toolsets } : {}),
        calls: calls.map((c) => ({ callId: c.functionCallId, name: c.tool })),
      },
      { timeoutMs: this.config.classifyTimeoutMs },
    );
    const byId = new Map(snapshot.calls.map((c) => [c.callId, c]));
    const unreachableById = new Map(snapshot.unreachable.map((u) => [u.callId, u.toolsetIds]));
    const unreachable = calls.flatMap((call) => {
      const toolsetIds = unreachableById.get(call.functionCallId);
      return toolsetIds ? [unavailableOutcome(call, toolsetIds, snapshot.unavailable)] : [];
    });
    const entries = calls
      .filter((call) => !unreachableById.has(call.functionCallId))
      .map((call) => {
        const entry = byId.get(call.functionCallId);
        if (!entry) throw new AppHostError('INTERNAL', `the classification snapshot has no entry for call ${call.functionCallId}`);
        return { call, handle: entry.handle, uiAssociated: entry.uiAssociated };
      });
    const facts = await this.toolsets(
      entries.map((e) => e.handle.toolsetId),
      snapshot.toolsets ?? [],
    );
    return { snapshot, admitted: entries.map((e) => ({ ...e, toolset: facts.get(e.handle.toolsetId)! })), unreachable };
  }

  /**
   * The binding revision and confirmation policy of each toolset: as the classification's own discovery read them
   * (the same registry request as the listings the handles come from), else one `get-toolset` per toolset.
   */
  private async toolsets(toolsetIds: readonly string[], read: readonly ToolsetStatusFacts[]): Promise<Map<string, ToolsetFacts>> {
    const out = new Map<string, ToolsetFacts>();
    const known = new Map(read.map((t) => [t.toolsetId, t]));
    await Promise.all(
      [...new Set(toolsetIds)].map(async (toolsetId) => {
        const status = known.get(toolsetId) ?? (await this.bus.request(RegistryGetToolset, { toolsetId }));
        out.set(toolsetId, {
          bindingRevision: status.state === 'PROFILE_BOUND' ? status.bindingRevision : null,
          profileId: status.state === 'PROFILE_BOUND' ? status.profileId : null,
          requireConfirmation: status.requireConfirmation ?? false,
        });
      }),
    );
    return out;
  }

  /**
   * Re-lists every executing generation once (fresh, fully paginated through the registry's bounds), so a definition
   * that drifted after classification fails closed instead of running.
   */
  async relist(handles: readonly BoundToolHandle[]): Promise<Map<string, Listing>> {
    const generations = new Map(handles.map((h) => [h.execution.generationId, h.execution]));
    const out = new Map<string, Listing>();
    await Promise.all(
      [...generations.values()].map(async (execution) => {
        try {
          const { tools } = await requestOnGeneration(this.bus, ConnListTools, execution, {}, { timeoutMs: this.config.classifyTimeoutMs });
          out.set(execution.generationId, { tools });
        } catch (error) {
          out.set(execution.generationId, { failure: describeFailure(error) });
        }
      }),
    );
    return out;
  }

  /** Runs one admitted call (its arguments are `call.arguments`: for a confirmed call, the sealed ones). */
  async execute(admitted: AdmittedCall, listing: Listing | undefined, ctx: CallContext): Promise<Outcome> {
    const { call, handle, uiAssociated, toolset } = admitted;
    const resourceUri = handle.resourceUri;
    if (uiAssociated && !resourceUri) return failedOutcome(call, 'FAILED_PRECONDITION', 'the UI tool has no ui:// resource in the classification snapshot');
    if (!listing || 'failure' in listing)
      return failedOutcome(call, listing?.failure.code ?? 'INTERNAL', listing?.failure.message ?? 'the tool could not be re-listed before the call');
    const drift = driftOf(handle.declaration, listing.tools);
    if (drift !== null) {
      this.logger.warn(
        { toolsetId: handle.toolsetId, tool: handle.nativeName, generationId: handle.execution.generationId, drift },
        'tool definition drifted between admission and call: not run',
      );
      return failedOutcome(call, 'TOOL_DRIFT', drift);
    }

    const result = await this.callOnce(admitted, ctx);
    if ('failure' in result) return failedOutcome(call, result.failure.code, result.failure.message);
    if (!uiAssociated || !resourceUri)
      return { response: { functionCallId: call.functionCallId, name: call.tool, response: result.valid as Record<string, unknown> } };
    if (toolset.bindingRevision === null) {
      // MODEL_ONLY (a toolset without a profile): the legacy `{ resourceUri, tool, toolArgs }` widget and the result
      // unchanged, as hosts without sealing expect; no sealing and no sealing limits.
      return {
        response: { functionCallId: call.functionCallId, name: call.tool, response: result.valid as Record<string, unknown> },
        widget: { resourceUri, tool: call.tool, toolArgs: call.arguments },
      };
    }
    return this.seal(admitted, result.valid, resourceUri, toolset.bindingRevision, ctx);
  }

  /**
   * Appends the one event, then starts committing every sealed reference it carries, and returns the event id
   * without waiting for the commits (`SealedCommits`: tracked, counted, awaited at shutdown). The event is durable
   * once the append answers, so a commit that fails or is still running changes nothing the caller can rely on.
   * `provenance`: the invocation's (`ui-message` when it consumed a View's message, see `InvocationOrigins`).
   */
  async appendAndCommit(
    ctx: Pick<CallContext, 'key' | 'incarnation'>,
    event: LedgerEventInput,
    outcomes: readonly Outcome[],
    provenance: AppendProvenance = USER_TURN,
  ): Promise<number> {
    await this.faults.hit('batch.before-append');
    const eventId = await this.append(ctx.key, ctx.incarnation, event, provenance);
    this.commits.start(
      ctx,
      eventId,
      outcomes.flatMap((o) => (o.recordId ? [{ functionCallId: o.response.functionCallId, recordId: o.recordId }] : [])),
    );
    return eventId;
  }

  async append(session: SessionKey, incarnation: number, event: LedgerEventInput, provenance: AppendProvenance = USER_TURN): Promise<number> {
    const appended = await this.bus.request(LifecycleAppendEvents, { session, incarnation, provenance, events: [event] });
    return appended.eventIds[0];
  }

  /** Exactly one attempt on the handle's generation: an initial UI call is never retried automatically. */
  private async callOnce(
    { call, handle }: AdmittedCall,
    ctx: CallContext,
  ): Promise<{ valid: ValidToolResult } | { failure: { code: string; message: string } }> {
    await ctx.mark.start();
    try {
      const reply = await requestOnGeneration(
        this.bus,
        ConnCallTool,
        handle.execution,
        {
          callId: `${ctx.operationId}.${call.index}`,
          name: handle.nativeName,
          arguments: call.arguments,
          timeoutMs: RequestContexts.bound(this.config.callTimeoutMs),
        },
        { timeoutMs: this.config.callTimeoutMs + 5_000 },
      );
      if (reply.kind !== 'complete')
        return { failure: { code: 'INPUT_REQUIRED_UNSUPPORTED', message: 'the tool asked for input, which model tool batches do not support yet' } };
      try {
        return { valid: validateToolResult(reply.result) };
      } catch (error) {
        this.logger.warn({ toolsetId: handle.toolsetId, tool: handle.nativeName, error: describeFailure(error) }, 'tool result failed validation');
        return { failure: { code: 'RESULT_INVALID', message: 'the tool returned a result that is not a valid CallToolResult' } };
      }
    } catch (error) {
      const failure = describeFailure(error);
      this.logger.warn({ toolsetId: handle.toolsetId, tool: handle.nativeName, error: failure }, 'tool call failed');
      return { failure };
    }
  }

  /**
   * Records the generation that produced a sealed result, before the event is appended, so a View binds to exactly
   * it. A failure does not fail the call (the tool ran and its result is sealed): the widget still appears, and its
   * bootstrap answers the placeholder GENERATION_GONE, as if the generation had ended.
   */
  private async recordProducer(ctx: CallContext, call: PlannedCall, admitted: AdmittedCall, recordId: string): Promise<void> {
    const { handle } = admitted;
    try {
      const ttlMs = await this.producerTtlOf(admitted.toolset.profileId);
      await this.producers.record({ session: ctx.key, incarnation: ctx.incarnation, functionCallId: call.functionCallId, recordId }, handle, call, ttlMs);
    } catch (error) {
      this.logger.warn(
        { session: ctx.key.sessionId, functionCallId: call.functionCallId, toolsetId: handle.toolsetId, error: describeFailure(error) },
        'recording the producing generation failed: the widget will open as a GENERATION_GONE placeholder',
      );
    }
  }

  /**
   * How long a producing record is kept: the profile's idempotency retention (a View may open while the call's
   * outcome is kept), at most the coordination store's day; `GOVERNED_VIEW_PRODUCER_TTL_MS` when the profile cannot
   * be read. Profiles are immutable, so each one's answer is kept in memory.
   */
  private async producerTtlOf(profileId: string | null): Promise<number> {
    if (profileId === null) return this.config.views.producerTtlMs;
    const known = this.producerTtls.get(profileId);
    if (known !== undefined) return known;
    try {
      const { profile } = await this.bus.request(RegistryGetProfile, { profileId });
      const ttlMs = Math.min(viewPolicyOf(profile).idempotency.retentionMs, MAX_PRODUCER_TTL_MS);
      if (this.producerTtls.size >= 256) this.producerTtls.clear();
      this.producerTtls.set(profileId, ttlMs);
      return ttlMs;
    } catch (error) {
      this.logger.warn({ profileId, error: describeFailure(error) }, 'the profile could not be read: the producing record keeps the default TTL');
      return this.config.views.producerTtlMs;
    }
  }

  /** Seals a profile-bound UI result PENDING with its refresh record; the model gets the projection, the event a descriptor. */
  private async seal(admitted: AdmittedCall, result: ValidToolResult, resourceUri: string, bindingRevision: string, ctx: CallContext): Promise<Outcome> {
    const { call, handle } = admitted;
    const envelope: SealedEnvelope = {
      result: result as SealedEnvelope['result'],
      refresh: {
        serverId: handle.toolsetId,
        toolsetId: handle.toolsetId,
        nativeToolName: handle.nativeName,
        arguments: { kind: 'inline', value: call.arguments },
        catalogGeneration: handle.catalogGeneration,
        bindingRevision,
        replayClassification: { source: 'catalog-policy.classify-batch', revision: ctx.snapshotId },
        initiatingOrigin: 'model',
        correlation: { invocationId: ctx.invocationId, functionCallId: call.functionCallId },
      },
    };
    let ref: { recordId: string; schemaVersion: number };
    try {
      // The tool has run: sealing is retried (same operation-instance id) while the deadline leaves room for the append.
      const created = await retryWithinDeadline(
        () =>
          this.sealed.create({
            scope: { session: ctx.key, incarnation: ctx.incarnation, functionCallId: call.functionCallId },
            operationInstanceId: `${ctx.operationId}.${call.index}`,
            envelope,
            ...(this.config.pendingTtlMs !== undefined ? { pendingTtlMs: this.config.pendingTtlMs } : {}),
          }),
        { reserveMs: APPEND_RESERVE_MS, fallbackBudgetMs: this.config.storeTimeoutMs },
      );
      ref = created.ref;
    } catch (error) {
      const failure = describeFailure(error);
      this.logger.warn({ toolsetId: handle.toolsetId, tool: handle.nativeName, error: failure }, 'sealing a UI result failed');
      return failure.code === 'PAYLOAD_TOO_LARGE'
        ? failedOutcome(call, 'RESULT_TOO_LARGE', 'The tool ran, but its result exceeds the sealing limit, so it is not shown.')
        : failedOutcome(call, 'EXECUTED_NOT_SEALED', EXECUTED_NOT_SEALED_MESSAGE);
    }
    await this.recordProducer(ctx, call, admitted, ref.recordId);
    return {
      response: { functionCallId: call.functionCallId, name: call.tool, response: projectForModel(result) as Record<string, unknown> },
      recordId: ref.recordId,
      widget: {
        schemaVersion: 1,
        resourceUri,
        correlation: { invocationId: ctx.invocationId, functionCallId: call.functionCallId },
        serverId: handle.toolsetId,
        toolsetId: handle.toolsetId,
        bindingRevision,
        sealedResultRef: { recordId: ref.recordId, schemaVersion: ref.schemaVersion },
      },
    };
  }
}
