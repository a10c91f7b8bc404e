import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  CatalogClassifyBatch,
  LifecycleGetSession,
  type GovernedRunToolBatch,
  type LedgerEventInput,
  type ParsedRequestOf,
  type PendingConfirmation,
  type RunToolBatchResponse,
  type ToolBatchFunctionResponse,
} from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { CONFIRMATION_REQUIRED_MESSAGE, ConfirmationGate, requestConfirmationCall } from '../confirmation/confirmation-gate';
import { batchEvent, mixedBatchEvent, planCalls } from './batch-plan';
import type { BatchConfig } from './batch.config';
import { BATCH_CONFIG, BATCH_LOGGER } from './batch.tokens';
import { AUTHOR, CallPipeline, failedOutcome, type AdmittedCall, type CallContext, type Outcome } from './call-pipeline';

type RunRequest = ParsedRequestOf<typeof GovernedRunToolBatch>;

/**
 * Model-originated tool batches (issue 7): admission against one classification snapshot, the mixed-batch
 * rejection, the confirmation policy (evaluated once per call, here), then every other call through the call
 * pipeline and ONE appended event.
 */
@Injectable()
export class ToolBatchService {
  constructor(
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(CallPipeline) private readonly pipeline: CallPipeline,
    @Inject(ConfirmationGate) private readonly confirmations: ConfirmationGate,
    @Inject(BATCH_CONFIG) private readonly config: BatchConfig,
    @Inject(BATCH_LOGGER) private readonly logger: Logger,
  ) {}

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
    const byId = new Map(snapshot.calls.map((c) => [c.callId, c]));
    const entries = calls.map((call) => {
      const entry = byId.get(call.functionCallId);
      if (!entry) throw new AppHostError('INTERNAL', `the classification snapshot has no entry for call ${call.functionCallId}`);
      return { call, handle: entry.handle, uiAssociated: entry.uiAssociated };
    });
    const facts = await this.pipeline.toolsets(entries.map((e) => e.handle.toolsetId));
    const admitted: AdmittedCall[] = entries.map((e) => ({ ...e, toolset: facts.get(e.handle.toolsetId)! }));

    // Mixed batches are rejected only under a bound profile: profile-less UI calls keep the legacy behaviour.
    if (snapshot.classification === 'mixed' && admitted.some((a) => a.uiAssociated && a.toolset.bindingRevision !== null)) {
      this.logger.info({ session: key.sessionId, invocationId: request.invocationId, calls: calls.length, snapshotId: snapshot.snapshotId }, 'mixed batch rejected before any call');
      const event = mixedBatchEvent(AUTHOR, request.invocationId, calls);
      const eventId = await this.pipeline.append(key, incarnation, event);
      return { eventId, incarnation, rejection: 'MIXED_BATCH', functionResponses: toResponses(event), widgets: [], confirmations: [] };
    }

    const ctx: CallContext = { key, incarnation, invocationId: request.invocationId, operationId: randomUUID(), snapshotId: snapshot.snapshotId };
    // Permits first: if one cannot be stored, the batch fails before any call has run.
    const held = admitted.filter((a) => this.confirmations.holds(a));
    const confirmations: PendingConfirmation[] = await Promise.all(held.map((a) => this.confirmations.issue(a, ctx, request.principal, request.toolsets)));
    const toRun = admitted.filter((a) => !held.includes(a));
    const listings = toRun.length > 0 ? await this.pipeline.relist(toRun.map((a) => a.handle)) : new Map();
    const outcomes: Outcome[] = await Promise.all(
      admitted.map((a) =>
        held.includes(a) ? failedOutcome(a.call, 'CONFIRMATION_REQUIRED', CONFIRMATION_REQUIRED_MESSAGE) : this.pipeline.execute(a, listings.get(a.handle.execution.generationId), ctx),
      ),
    );

    const responses = outcomes.map((o) => o.response);
    const widgets = outcomes.flatMap((o) => (o.widget ? [o.widget] : []));
    const event = batchEvent(AUTHOR, request.invocationId, responses, widgets, confirmations.map(requestConfirmationCall));
    const eventId = await this.pipeline.appendAndCommit(ctx, event, outcomes);
    return { eventId, incarnation, rejection: null, functionResponses: responses, widgets, confirmations };
  }
}

function toResponses(event: LedgerEventInput): ToolBatchFunctionResponse[] {
  return (event.functionResponses ?? []).map((r) => ({ functionCallId: r.id, name: r.name, response: r.response ?? {} }));
}
