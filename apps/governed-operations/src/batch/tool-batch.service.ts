import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  CatalogClassifyBatch,
  ConnCallTool,
  ConnListTools,
  LifecycleAppendEvents,
  LifecycleGetSession,
  RegistryGetToolset,
  type BoundToolHandle,
  type ParsedRequestOf,
  type GovernedRunToolBatch,
  type LedgerEventInput,
  type RunToolBatchResponse,
  type SealedEnvelope,
  type SessionKey,
  type ToolBatchFunctionResponse,
  type WidgetDescriptor,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { projectForModel, validateToolResult, type ValidToolResult } from '@apphost/policy';
import type { Logger } from '@apphost/runtime';
import { batchEvent, describeFailure, driftOf, errorResponse, mixedBatchEvent, planCalls, type PlannedCall } from './batch-plan';
import type { BatchConfig } from './batch.config';
import { BATCH_CONFIG, BATCH_LOGGER } from './batch.tokens';
import { SealedWriter } from './sealed.client';

type RunRequest = ParsedRequestOf<typeof GovernedRunToolBatch>;
type Classified = { call: PlannedCall; handle: BoundToolHandle; uiAssociated: boolean };
/** What one call produced before the append: the function response and, for a sealed UI result, its descriptor. */
type Listed = { tools: Record<string, unknown>[] } | { failure: { code: string; message: string } };
type Outcome = { response: ToolBatchFunctionResponse; widget?: WidgetDescriptor; recordId?: string };

const AUTHOR = 'apphost';

/**
 * Model-originated tool batches (issue 7): admission against one classification snapshot, execution on each
 * handle's generation, the result pipeline (validate → seal PENDING → append ONE event → commit) and the
 * mixed-batch rejection. Ordering is seal → append → commit, so a failure before the append leaves only PENDING
 * records no event references (GC collects them); a failed commit after the append is repaired by `resolve`
 * naming the event.
 */
@Injectable()
export class ToolBatchService {
  private readonly sealed: SealedWriter;

  constructor(
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(BATCH_CONFIG) private readonly config: BatchConfig,
    @Inject(BATCH_LOGGER) private readonly logger: Logger,
  ) {
    this.sealed = new SealedWriter(bus, config.storeTimeoutMs);
  }

  async run(request: RunRequest): Promise<RunToolBatchResponse> {
    const calls = planCalls(request.invocationId, request.calls);
    const key = request.session;
    const view = await this.bus.request(LifecycleGetSession, { session: key });
    if (view.state !== 'ACTIVE') throw new AppHostError('NOT_FOUND', 'session not found');
    const incarnation = view.incarnation;

    const snapshot = await this.bus.request(
      CatalogClassifyBatch,
      { principal: request.principal, session: { key, incarnation }, toolsets: request.toolsets, calls: calls.map((c) => ({ callId: c.functionCallId, name: c.tool })) },
      { timeoutMs: this.config.classifyTimeoutMs },
    );

    if (snapshot.classification === 'mixed') {
      this.logger.info({ session: key.sessionId, invocationId: request.invocationId, calls: calls.length, snapshotId: snapshot.snapshotId }, 'mixed batch rejected before any call');
      const event = mixedBatchEvent(AUTHOR, request.invocationId, calls);
      const eventId = await this.append(key, incarnation, event);
      return { eventId, incarnation, rejection: 'MIXED_BATCH', functionResponses: toResponses(event), widgets: [] };
    }

    const byId = new Map(snapshot.calls.map((c) => [c.callId, c]));
    const classified: Classified[] = calls.map((call) => {
      const entry = byId.get(call.functionCallId);
      if (!entry) throw new AppHostError('INTERNAL', `the classification snapshot has no entry for call ${call.functionCallId}`);
      return { call, handle: entry.handle, uiAssociated: entry.uiAssociated };
    });
    const [revisions, listings] = await Promise.all([this.bindingRevisions(classified.filter((c) => c.uiAssociated).map((c) => c.handle.toolsetId)), this.relist(classified.map((c) => c.handle))]);
    const operationId = randomUUID();

    const outcomes = await Promise.all(
      classified.map((c) => this.execute(c, listings.get(c.handle.execution.generationId), { key, incarnation, invocationId: request.invocationId, operationId, snapshotId: snapshot.snapshotId, bindingRevision: revisions.get(c.handle.toolsetId) ?? null })),
    );

    const responses = outcomes.map((o) => o.response);
    const widgets = outcomes.flatMap((o) => (o.widget ? [o.widget] : []));
    const eventId = await this.append(key, incarnation, batchEvent(AUTHOR, request.invocationId, responses, widgets));

    await Promise.all(
      outcomes.map(async (o) => {
        if (!o.recordId) return;
        try {
          await this.sealed.commit({ session: key, incarnation, eventId: String(eventId), functionCallId: o.response.functionCallId, recordId: o.recordId });
        } catch (error) {
          // The event stands; a resolve naming it binds the PENDING record (same guarded statement as commit).
          this.logger.warn({ session: key.sessionId, eventId, functionCallId: o.response.functionCallId, error: describeFailure(error) }, 'sealed reference commit failed after the append');
        }
      }),
    );
    return { eventId, incarnation, rejection: null, functionResponses: responses, widgets };
  }

  /** The current binding revision of each toolset a UI call runs on; a toolset that is not PROFILE_BOUND has none. */
  private async bindingRevisions(toolsetIds: string[]): Promise<Map<string, string | null>> {
    const out = new Map<string, string | null>();
    await Promise.all(
      [...new Set(toolsetIds)].map(async (toolsetId) => {
        const status = await this.bus.request(RegistryGetToolset, { toolsetId });
        out.set(toolsetId, status.state === 'PROFILE_BOUND' ? status.bindingRevision : null);
      }),
    );
    return out;
  }

  /**
   * Re-lists every executing generation once (fresh, fully paginated through the registry's bounds), so a definition
   * that drifted after classification fails closed instead of running.
   */
  private async relist(handles: BoundToolHandle[]): Promise<Map<string, Listed>> {
    const generations = new Map(handles.map((h) => [h.execution.generationId, h.execution]));
    const out = new Map<string, Listed>();
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

  private async execute(
    c: Classified,
    listed: Listed | undefined,
    ctx: { key: SessionKey; incarnation: number; invocationId: string; operationId: string; snapshotId: string; bindingRevision: string | null },
  ): Promise<Outcome> {
    const { call, handle } = c;
    const fail = (code: string, message: string): Outcome => ({ response: { functionCallId: call.functionCallId, name: call.tool, response: errorResponse(code, message) } });
    const { bindingRevision } = ctx;
    const resourceUri = handle.resourceUri;
    if (c.uiAssociated && bindingRevision === null) {
      // MODEL_ONLY (legacy widget payload, no sealing) is not implemented yet: fail closed before the call runs.
      return fail('FAILED_PRECONDITION', `toolset ${handle.toolsetId} is not bound to a host profile; its UI tools cannot run here yet`);
    }
    if (c.uiAssociated && !resourceUri) return fail('FAILED_PRECONDITION', 'the UI tool has no ui:// resource in the classification snapshot');
    if (!listed || 'failure' in listed) return fail(listed?.failure.code ?? 'INTERNAL', listed?.failure.message ?? 'the tool could not be re-listed before the call');
    const drift = driftOf(handle.declaration, listed.tools);
    if (drift !== null) {
      this.logger.warn({ toolsetId: handle.toolsetId, tool: handle.nativeName, generationId: handle.execution.generationId, drift }, 'tool definition drifted between admission and call: not run');
      return fail('TOOL_DRIFT', drift);
    }

    let result: ValidToolResult;
    try {
      // Exactly one attempt on the handle's generation: an initial UI call is never retried automatically.
      const reply = await requestOnGeneration(
        this.bus,
        ConnCallTool,
        handle.execution,
        { callId: `${ctx.operationId}.${call.index}`, name: handle.nativeName, arguments: call.arguments, timeoutMs: this.config.callTimeoutMs },
        { timeoutMs: this.config.callTimeoutMs + 5_000 },
      );
      if (reply.kind !== 'complete') return fail('INPUT_REQUIRED_UNSUPPORTED', 'the tool asked for input, which model tool batches do not support yet');
      try {
        result = validateToolResult(reply.result);
      } catch (error) {
        this.logger.warn({ toolsetId: handle.toolsetId, tool: handle.nativeName, error: describeFailure(error) }, 'tool result failed validation');
        return fail('RESULT_INVALID', 'the tool returned a result that is not a valid CallToolResult');
      }
    } catch (error) {
      const failure = describeFailure(error);
      this.logger.warn({ toolsetId: handle.toolsetId, tool: handle.nativeName, error: failure }, 'tool call failed');
      return fail(failure.code, failure.message);
    }

    if (!c.uiAssociated || bindingRevision === null || !resourceUri) return { response: { functionCallId: call.functionCallId, name: call.tool, response: result as Record<string, unknown> } };

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
    let recordId: string;
    let schemaVersion: number;
    try {
      const created = await this.sealed.create({
        scope: { session: ctx.key, incarnation: ctx.incarnation, functionCallId: call.functionCallId },
        operationInstanceId: `${ctx.operationId}.${call.index}`,
        envelope,
        ...(this.config.pendingTtlMs !== undefined ? { pendingTtlMs: this.config.pendingTtlMs } : {}),
      });
      ({ recordId, schemaVersion } = created.ref);
    } catch (error) {
      const failure = describeFailure(error);
      this.logger.warn({ toolsetId: handle.toolsetId, tool: handle.nativeName, error: failure }, 'sealing a UI result failed');
      return fail(failure.code === 'PAYLOAD_TOO_LARGE' ? 'RESULT_TOO_LARGE' : 'SEAL_FAILED', failure.code === 'PAYLOAD_TOO_LARGE' ? 'the tool result exceeds the sealing limit' : 'the tool result could not be sealed');
    }
    return {
      response: { functionCallId: call.functionCallId, name: call.tool, response: projectForModel(result) as Record<string, unknown> },
      recordId,
      widget: {
        schemaVersion: 1,
        resourceUri,
        correlation: { invocationId: ctx.invocationId, functionCallId: call.functionCallId },
        serverId: handle.toolsetId,
        toolsetId: handle.toolsetId,
        bindingRevision,
        sealedResultRef: { recordId, schemaVersion },
      },
    };
  }

  private async append(session: SessionKey, incarnation: number, event: LedgerEventInput): Promise<number> {
    const appended = await this.bus.request(LifecycleAppendEvents, { session, incarnation, provenance: { path: 'user-turn' }, events: [event] });
    return appended.eventIds[0];
  }
}

function toResponses(event: LedgerEventInput): ToolBatchFunctionResponse[] {
  return (event.functionResponses ?? []).map((r) => ({ functionCallId: r.id, name: r.name, response: r.response ?? {} }));
}
