import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { BusClient, RequestContexts } from '@apphost/bus';
import { canonicalDigest } from '@apphost/canonical-json';
import {
  AppHostError,
  GovernedReasons,
  LifecycleFindCallEvent,
  type PendingConfirmation,
  type ResponseOf,
  type RunToolBatchResponse,
} from '@apphost/contracts';
import { CallClaims, type ClaimHolder, type ClaimScope } from '../calls/call-claims';
import { OwnerHeartbeat } from '../calls/owner-heartbeat';
import { classifyFailure, ExecutionMark } from '../calls/outcome-classification';
import { REQUEST_CONFIRMATION_TOOL } from '../confirmation/confirmation-gate';
import type { BatchConfig } from '../governed.config';
import { BATCH_CONFIG } from '../governed.tokens';
import type { PlannedCall } from './batch-plan';

type FoundEvent = NonNullable<ResponseOf<typeof LifecycleFindCallEvent>['event']>;

/** The `customMetadata` member of a batch's event that names the batch it answers. */
export const REPLAY_METADATA_KEY = 'apphostToolBatch';

/** The identity of a batch: its invocation and its calls (ids, tools, canonical arguments). */
export function replayDigest(invocationId: string, calls: readonly PlannedCall[]): string {
  return canonicalDigest('replay-identity', {
    kind: 'apphost.tool-batch.v1',
    invocationId,
    calls: calls.map((c) => ({ functionCallId: c.functionCallId, tool: c.tool, arguments: c.arguments })),
  });
}

export const replayMetadata = (digest: string): Record<string, unknown> => ({ [REPLAY_METADATA_KEY]: { replayDigest: digest } });

/** This run's claim on the batch's call ids: its start mark, and how a failure settles the claim. */
export interface ClaimedBatch {
  mark: ExecutionMark;
  settle(error: unknown, mark: ExecutionMark): Promise<unknown>;
}

/** Either the retained answer of an earlier run of the same batch, or this run's claim on its call ids. */
export type ReplayGate = { retained: RunToolBatchResponse } | { claimed: ClaimedBatch };

const POLL_FIRST_MS = 25;
const POLL_MAX_MS = 500;
/** Claim rounds of one request: the first, and one more if the owner it waited on died meanwhile. */
const OWNER_DEATH_ROUNDS = 2;

/**
 * One execution per call. The ledger is the record: a batch already answered by an event of this incarnation
 * (the first event answering its first call id in its invocation) gets that event back, and nothing runs. Else
 * the batch claims its call ids (`CallClaims`). A duplicate that finds them claimed asks whether the owner process
 * is alive (`OwnerHeartbeat`): alive, it waits for the event until the request deadline
 * (`GOVERNED_DUPLICATE_IN_FLIGHT=wait`, the default) or is answered at once (`reject`), OUTCOME_UNKNOWN
 * (`CALL_IN_FLIGHT`) either way if no event came; an owner that dies while the duplicate waits is then treated as
 * dead. Dead before any call started, the duplicate takes the claims
 * over and runs the batch; dead after, it is answered at once OUTCOME_UNKNOWN (`EXECUTED_NOT_RECORDED`) and
 * nothing runs again. Different calls under the same ids are CONFLICT (`CALL_ID_REUSED`).
 */
@Injectable()
export class BatchReplay {
  constructor(
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(CallClaims) private readonly claims: CallClaims,
    @Inject(OwnerHeartbeat) private readonly heartbeat: OwnerHeartbeat,
    @Inject(BATCH_CONFIG) private readonly config: BatchConfig,
  ) {}

  /** `answered`: the first lookup's answer when the caller already made it (`open-batch`); else it is made here. */
  async enter(scope: ClaimScope, calls: readonly PlannedCall[], digest: string, operationId: string, answered?: FoundEvent | null): Promise<ReplayGate> {
    const earlier = answered === undefined ? await this.retained(scope, calls, digest) : retainedOf(answered, scope, digest);
    if (earlier) return { retained: earlier };
    const ids = calls.map((c) => c.functionCallId);
    const holder: ClaimHolder = { owner: this.heartbeat.ownerId, operationId };
    // A second round only when the owner a duplicate was waiting on died meanwhile.
    for (let round = 0; round < OWNER_DEATH_ROUNDS; round++) {
      let claim = await this.claims.claim(scope, ids, digest, holder);
      if (claim.kind === 'in-flight' && claim.held && !(await this.heartbeat.isAlive(claim.held.owner))) {
        if (claim.held.started) return { retained: await this.settleDeadRun(scope, calls, digest) };
        // The dead run had not started any call: this one takes its place (a racing duplicate may win instead).
        claim = await this.claims.takeOver(scope, ids, claim.held, digest, holder);
      }
      if (claim.kind === 'conflict') throw reused();
      if (claim.kind === 'claimed') return { claimed: this.claimed(scope, ids, digest, holder) };
      const waited = await this.awaitEvent(scope, calls, digest, claim.held?.owner);
      if (waited !== 'owner-died') return { retained: waited };
    }
    throw inFlight(scope);
  }

  private claimed(scope: ClaimScope, ids: readonly string[], digest: string, holder: ClaimHolder): ClaimedBatch {
    return {
      // Persisted before the first call executes: a duplicate finding this process dead knows a tool may have run.
      mark: new ExecutionMark(() => this.claims.markStarted(scope, ids, digest, holder)),
      // Before any call ran the claim is released (a retry runs the batch); after, it stays (a retry never re-runs).
      // A release that fails leaves the claim to lapse at its TTL; the caller still gets the original error.
      settle: async (error, mark) => {
        if (!mark.started) await this.claims.release(scope, ids, digest, holder).catch(() => undefined);
        return classifyFailure(error, mark);
      },
    };
  }

  /** The owner died after a call started: its event may have landed since; else the outcome is unknown, for good. */
  private async settleDeadRun(scope: ClaimScope, calls: readonly PlannedCall[], digest: string): Promise<RunToolBatchResponse> {
    const found = await this.retained(scope, calls, digest);
    if (found) return found;
    throw new AppHostError(
      'OUTCOME_UNKNOWN',
      'an earlier run of this batch stopped after its tool started; its outcome was not recorded, and it is not run again',
      { details: GovernedReasons.details('EXECUTED_NOT_RECORDED', { invocationId: scope.invocationId }) },
    );
  }

  /** Polls the ledger until the deadline; stops early (`owner-died`) if the claim's owner process is gone. */
  private async awaitEvent(
    scope: ClaimScope,
    calls: readonly PlannedCall[],
    digest: string,
    owner: string | undefined,
  ): Promise<RunToolBatchResponse | 'owner-died'> {
    for (let pause = POLL_FIRST_MS; this.config.duplicateInFlight === 'wait'; pause = Math.min(pause * 2, POLL_MAX_MS)) {
      const remaining = RequestContexts.remainingMs() ?? 0;
      // Leave time to answer before the caller's deadline.
      if (remaining <= pause + POLL_MAX_MS) break;
      await sleep(pause);
      const found = await this.retained(scope, calls, digest);
      if (found) return found;
      if (owner !== undefined && !(await this.heartbeat.isAlive(owner))) return 'owner-died';
    }
    throw inFlight(scope);
  }

  private async retained(scope: ClaimScope, calls: readonly PlannedCall[], digest: string): Promise<RunToolBatchResponse | null> {
    const { event } = await this.bus.request(LifecycleFindCallEvent, {
      session: scope.session,
      incarnation: scope.incarnation,
      callId: calls[0].functionCallId,
      answering: 'response',
      invocationId: scope.invocationId,
    });
    return retainedOf(event, scope, digest);
  }
}

/** The retained answer of an earlier run (`event`: the first event answering the batch's first call), if any. */
function retainedOf(event: FoundEvent | null, scope: ClaimScope, digest: string): RunToolBatchResponse | null {
  if (!event) return null;
  if (recordedDigest(event) !== digest) throw reused();
  return toResponse(event, scope.incarnation);
}

function inFlight(scope: ClaimScope): AppHostError {
  return new AppHostError('OUTCOME_UNKNOWN', 'the same batch is still running (or stopped before recording its event); it is not run again', {
    details: GovernedReasons.details('CALL_IN_FLIGHT', { invocationId: scope.invocationId }),
  });
}

function reused(): AppHostError {
  return new AppHostError('CONFLICT', 'these invocation and function-call ids already name other calls; nothing ran', {
    details: GovernedReasons.details('CALL_ID_REUSED'),
  });
}

function recordedDigest(event: FoundEvent): string | null {
  const meta = event.customMetadata?.[REPLAY_METADATA_KEY] as { replayDigest?: unknown } | undefined;
  return typeof meta?.replayDigest === 'string' ? meta.replayDigest : null;
}

/** The batch's reply rebuilt from its event: the same responses, widgets and pending confirmations. */
function toResponse(event: FoundEvent, incarnation: number): RunToolBatchResponse {
  const functionResponses = event.functionResponses.map((r) => ({ functionCallId: r.id, name: r.name, response: r.response ?? {} }));
  const mixed = functionResponses.every((r) => (r.response['error'] as { code?: string } | undefined)?.code === 'MIXED_BATCH');
  const confirmations: PendingConfirmation[] = event.functionCalls
    .filter((c) => c.name === REQUEST_CONFIRMATION_TOOL)
    .map((c) => {
      const args = c.args as { originalFunctionCall: { id: string; name: string; args: Record<string, unknown> }; expiresAt: string };
      return {
        confirmationId: c.id,
        functionCallId: args.originalFunctionCall.id,
        tool: args.originalFunctionCall.name,
        arguments: args.originalFunctionCall.args,
        argumentsDigest: canonicalDigest('confirmation-arguments', args.originalFunctionCall.args),
        expiresAt: args.expiresAt,
      };
    });
  return { eventId: event.eventId, incarnation, rejection: mixed ? 'MIXED_BATCH' : null, functionResponses, widgets: event.widgets, confirmations };
}
