import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  type AppendProvenance,
  type GovernedRunToolBatch,
  type LedgerEventInput,
  type ParsedRequestOf,
  type PendingConfirmation,
  type RunToolBatchResponse,
  type ToolBatchFunctionResponse,
} from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { CONFIRMATION_REQUIRED_MESSAGE, ConfirmationGate, requestConfirmationCall } from '../confirmation/confirmation-gate';
import { batchEvent, mixedBatchEvent, planCalls, type PlannedCall } from './batch-plan';
import { BATCH_CONFIG, BATCH_LOGGER } from '../governed.tokens';
import { AUTHOR, CallPipeline, failedOutcome, type CallContext, type Outcome } from '../calls/call-pipeline';
import { admitArguments } from '@apphost/policy';
import type { ExecutionMark } from '../calls/outcome-classification';
import { requireSealedStore } from '../calls/store-admission';
import type { BatchConfig } from '../governed.config';
import { BatchReplay, replayDigest, replayMetadata } from './batch-replay';
import { InvocationOrigins } from '../conversation/invocation-origins';

type RunRequest = ParsedRequestOf<typeof GovernedRunToolBatch>;

/**
 * Model-originated tool batches: admission against one classification snapshot, the mixed-batch
 * rejection, the confirmation policy (evaluated once per call, here), then every other call through the call
 * pipeline and ONE appended event.
 */
@Injectable()
export class ToolBatchService {
  constructor(
    @Inject(CallPipeline) private readonly pipeline: CallPipeline,
    @Inject(ConfirmationGate) private readonly confirmations: ConfirmationGate,
    @Inject(BatchReplay) private readonly replay: BatchReplay,
    @Inject(InvocationOrigins) private readonly origins: InvocationOrigins,
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(BATCH_CONFIG) private readonly config: BatchConfig,
    @Inject(BATCH_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Admission of the arguments and the replay gate come first: a retried batch gets its own event back and
   * nothing runs again; errors are classified by whether a call had started (see `outcome-classification.ts`).
   */
  async run(request: RunRequest): Promise<RunToolBatchResponse> {
    admitArguments(request.calls);
    const calls = planCalls(request.invocationId, request.calls);
    const key = request.session;
    // The session's incarnation, the invocation's provenance and the replay gate's first ledger lookup: one request,
    // before the replay gate and any call, so a read that fails leaves nothing behind.
    const { incarnation, provenance, answered } = await this.origins.openBatch(key, request.invocationId, calls[0].functionCallId);
    const digest = replayDigest(request.invocationId, calls);
    const operationId = randomUUID();
    const gate = await this.replay.enter({ session: key, incarnation, invocationId: request.invocationId }, calls, digest, operationId, answered);
    if ('retained' in gate) return gate.retained;
    const { mark } = gate.claimed;
    try {
      return await this.runClaimed(request, calls, incarnation, { digest, operationId, mark, provenance });
    } catch (error) {
      throw await gate.claimed.settle(error, mark);
    }
  }

  private async runClaimed(
    request: RunRequest,
    calls: PlannedCall[],
    incarnation: number,
    run: { digest: string; operationId: string; mark: ExecutionMark; provenance: AppendProvenance },
  ): Promise<RunToolBatchResponse> {
    const key = request.session;
    // The sealed store's readiness is read while the batch is classified (independent reads); it is awaited below,
    // before any call, only when a call will need sealing.
    const storeReady = requireSealedStore(this.bus, this.config.storeTimeoutMs).then(
      () => null,
      (error: unknown) => ({ error }),
    );
    const { snapshot, admitted, unreachable } = await this.pipeline.admit({ principal: request.principal, key, incarnation }, request.toolsets, calls);

    // Mixed batches are rejected only under a bound profile: profile-less UI calls keep the legacy behaviour.
    if (snapshot.classification === 'mixed' && admitted.some((a) => a.uiAssociated && a.toolset.bindingRevision !== null)) {
      this.logger.info(
        { session: key.sessionId, invocationId: request.invocationId, calls: calls.length, snapshotId: snapshot.snapshotId },
        'mixed batch rejected before any call',
      );
      const event = { ...mixedBatchEvent(AUTHOR, request.invocationId, calls), customMetadata: replayMetadata(run.digest) };
      const eventId = await this.pipeline.append(key, incarnation, event, run.provenance);
      return { eventId, incarnation, rejection: 'MIXED_BATCH', functionResponses: toResponses(event), widgets: [], confirmations: [] };
    }

    const ctx: CallContext = {
      key,
      incarnation,
      invocationId: request.invocationId,
      operationId: run.operationId,
      snapshotId: snapshot.snapshotId,
      mark: run.mark,
      provenance: run.provenance,
    };
    // Permits and the stores the calls need first: if one is unavailable, the batch fails before any call has run.
    const held = admitted.filter((a) => this.confirmations.holds(a));
    if (admitted.some((a) => !held.includes(a) && a.uiAssociated && a.toolset.bindingRevision !== null)) {
      const notReady = await storeReady;
      if (notReady) throw notReady.error;
    }
    const confirmations: PendingConfirmation[] = await Promise.all(held.map((a) => this.confirmations.issue(a, ctx, request.principal, request.toolsets)));
    const toRun = admitted.filter((a) => !held.includes(a));
    const listings = toRun.length > 0 ? await this.pipeline.relist(toRun.map((a) => a.handle)) : new Map();
    const ran: Outcome[] = await Promise.all(
      admitted.map((a) =>
        held.includes(a)
          ? failedOutcome(a.call, 'CONFIRMATION_REQUIRED', CONFIRMATION_REQUIRED_MESSAGE)
          : this.pipeline.execute(a, listings.get(a.handle.execution.generationId), ctx),
      ),
    );
    // Calls to an unavailable toolset fail alone; the event still answers every call in the batch's order.
    const answered = new Map([...ran, ...unreachable].map((o) => [o.response.functionCallId, o]));
    const outcomes = calls.flatMap((c) => answered.get(c.functionCallId) ?? []);

    const responses = outcomes.map((o) => o.response);
    const widgets = outcomes.flatMap((o) => (o.widget ? [o.widget] : []));
    const event = {
      ...batchEvent(AUTHOR, request.invocationId, responses, widgets, confirmations.map(requestConfirmationCall)),
      customMetadata: replayMetadata(run.digest),
    };
    const eventId = await this.pipeline.appendAndCommit(ctx, event, outcomes, run.provenance);
    return { eventId, incarnation, rejection: null, functionResponses: responses, widgets, confirmations };
  }
}

function toResponses(event: LedgerEventInput): ToolBatchFunctionResponse[] {
  return (event.functionResponses ?? []).map((r) => ({ functionCallId: r.id, name: r.name, response: r.response ?? {} }));
}
