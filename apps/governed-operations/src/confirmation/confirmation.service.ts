import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import { canonicalDigest } from '@apphost/canonical-json';
import { AppHostError, LifecycleGetSession, type GovernedDecideConfirmation, type ParsedRequestOf, type RunToolBatchResponse } from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { batchEvent, describeFailure, type PlannedCall } from '../tool-batches/batch-plan';
import { BATCH_LOGGER } from '../governed.tokens';
import { AUTHOR, CallPipeline, failedOutcome, type CallContext, type Outcome } from '../calls/call-pipeline';
import { declarationDigest } from './confirmation-gate';
import { ConfirmationPermits, type Permit } from './confirmation-permits';
import { classifyFailure, ExecutionMark } from '../calls/outcome-classification';
import { missingPermitError } from './permit-loss';
import { UI_MESSAGE, USER_TURN } from '../conversation/invocation-origins';

type DecideRequest = ParsedRequestOf<typeof GovernedDecideConfirmation>;

/**
 * The user's decision on a sealed confirmation permit. The permit is taken once; the policy is not evaluated
 * again; approval runs the sealed arguments only if the tool identity, server and binding revision the permit was
 * bound to still hold on a fresh classification. Every decision ends in ONE event carrying the call's response.
 */
@Injectable()
export class ConfirmationService {
  constructor(
    @Inject(CallPipeline) private readonly pipeline: CallPipeline,
    @Inject(ConfirmationPermits) private readonly permits: ConfirmationPermits,
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(BATCH_LOGGER) private readonly logger: Logger,
  ) {}

  async decide(request: DecideRequest): Promise<RunToolBatchResponse> {
    const permit = await this.permits.take(request.session, request.principal, request.confirmationId);
    if (!permit) throw await this.whyNoPermit(request);
    const args = JSON.parse(permit.arguments) as Record<string, unknown>;
    if (canonicalDigest('confirmation-arguments', args) !== permit.argumentsDigest)
      throw new AppHostError('FAILED_PRECONDITION', 'the confirmation permit failed its integrity check; nothing ran');

    // The permit belongs to one incarnation: a deleted or recreated session never runs it.
    if ((await this.pipeline.activeIncarnation(request.session)) !== permit.incarnation) throw new AppHostError('NOT_FOUND', 'session not found');

    const call: PlannedCall = { index: 0, functionCallId: permit.functionCallId, tool: permit.tool, arguments: args };
    const mark = new ExecutionMark();
    try {
      return await this.decideTaken(request, permit, call, mark);
    } catch (error) {
      throw classifyFailure(error, mark);
    }
  }

  /** NOT_FOUND, unless the ledger proves the permit was issued and is undecided but gone (`missingPermitError`). */
  private async whyNoPermit(request: DecideRequest): Promise<AppHostError> {
    const notFound = new AppHostError('NOT_FOUND', 'no pending confirmation with this id in this session (already decided, or never issued)');
    const view = await this.bus.request(LifecycleGetSession, { session: request.session });
    if (view.state !== 'ACTIVE' || (await this.permits.explains(request.session, view.incarnation, request.confirmationId))) return notFound;
    return missingPermitError(this.bus, request.session, view.incarnation, request.confirmationId);
  }

  private async decideTaken(request: DecideRequest, permit: Permit, call: PlannedCall, mark: ExecutionMark): Promise<RunToolBatchResponse> {
    let outcome: Outcome;
    if (Date.parse(permit.expiresAt) <= this.permits.now())
      outcome = failedOutcome(call, 'CONFIRMATION_EXPIRED', 'The user did not decide in time, so this call did not run. Ask again if it is still needed.');
    else if (!request.confirmed) outcome = failedOutcome(call, 'CONFIRMATION_DENIED', 'The user declined this call, so it did not run.');
    else outcome = await this.runApproved(request, permit, call, mark);
    this.logger.info(
      {
        session: request.session.sessionId,
        confirmationId: permit.confirmationId,
        tool: permit.tool,
        confirmed: request.confirmed,
        outcome: errorCodeOf(outcome) ?? 'ran',
      },
      'confirmation decided',
    );

    const widgets = outcome.widget ? [outcome.widget] : [];
    const eventId = await this.pipeline.appendAndCommit(
      { key: request.session, incarnation: permit.incarnation },
      batchEvent(AUTHOR, permit.invocationId, [outcome.response], widgets, []),
      [outcome],
      permit.continuesMessage ? UI_MESSAGE : USER_TURN,
    );
    return { eventId, incarnation: permit.incarnation, rejection: null, functionResponses: [outcome.response], widgets, confirmations: [] };
  }

  /** A fresh classification of the one call; it runs only if what the permit was bound to still holds. */
  private async runApproved(request: DecideRequest, permit: Permit, call: PlannedCall, mark: ExecutionMark): Promise<Outcome> {
    let admission;
    try {
      admission = await this.pipeline.admit(
        { principal: request.principal, key: request.session, incarnation: permit.incarnation },
        permit.toolsets ?? undefined,
        [call],
      );
    } catch (error) {
      return stale(call, `the tool is no longer available as approved (${describeFailure(error).message})`);
    }
    const {
      snapshot,
      admitted: [admitted],
      unreachable: [unreachable],
    } = admission;
    if (!admitted) return unreachable ?? stale(call, 'the tool is no longer in the catalog');
    const { handle, uiAssociated, toolset } = admitted;
    const mismatch =
      handle.toolsetId !== permit.toolsetId || handle.nativeName !== permit.nativeName
        ? 'the name now resolves to another tool or server'
        : declarationDigest(handle.declaration) !== permit.declarationDigest || uiAssociated !== permit.uiAssociated
          ? 'the tool definition changed since it was approved'
          : toolset.bindingRevision !== permit.bindingRevision
            ? 'the toolset binding changed since it was approved'
            : null;
    if (mismatch) return stale(call, mismatch);
    const listing = (await this.pipeline.relist([handle])).get(handle.execution.generationId);
    const ctx: CallContext = {
      key: request.session,
      incarnation: permit.incarnation,
      invocationId: permit.invocationId,
      operationId: randomUUID(),
      snapshotId: snapshot.snapshotId,
      mark,
    };
    return this.pipeline.execute(admitted, listing, ctx);
  }
}

function stale(call: PlannedCall, why: string): Outcome {
  return failedOutcome(call, 'CONFIRMATION_STALE', `The approved call did not run: ${why}. Call the tool again to ask anew.`);
}

function errorCodeOf(outcome: Outcome): string | undefined {
  const error = outcome.response.response['error'] as { code?: string } | undefined;
  return error?.code;
}
