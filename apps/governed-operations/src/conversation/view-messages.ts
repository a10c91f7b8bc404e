import { randomBytes } from 'node:crypto';
import type { BusClient } from '@apphost/bus';
import { AppHostError, GovernedReasons, LifecycleDecideMessage, LifecycleRecordMessage, type MESSAGE_REJECTIONS, type ViewCaller } from '@apphost/contracts';
import { offeredHostCapabilities } from '@apphost/policy';
import type { FaultPoints, Logger } from '@apphost/runtime';
import type { MessageConfig } from '../governed.config';
import type { GovernedFaultPoint } from '../governed.faults';
import { describeFailure } from '../tool-batches/batch-plan';
import { revokedError } from '../views/view-checks';
import { IMPLEMENTED_HOST_CAPABILITIES } from '../views/view-bootstrap';
import type { BarrierPass, OperationTarget, ViewContext } from '../view-rpc/ports';
import type { MinuteWindows } from '../view-rpc/rpc-limiter';
import type { ViewBarrier } from '../view-rpc/view-barrier';
import { messageContentOf, type MessageContent } from './message-content';

type MessageTarget = Extract<OperationTarget, { kind: 'message' }>;
type Rejection = (typeof MESSAGE_REJECTIONS)[number];

/**
 * `ui/message` from a View: a user message that starts a model turn, held durably by the lifecycle-store until a
 * runtime consumes it. `admit` runs before the barrier (content, policy, rate: a refusal records nothing); `deliver`
 * after it, in this order, so the View's `{}` means "the conversation has it":
 *
 *   record (`RECORDED`) → the barrier's liveness checks again → `decide-message accept` (`ACCEPTED`) → `{}`.
 *
 * A teardown (or any revocation) before the record refuses it there; one between record and accept is seen by the
 * re-check, which rejects the record (`VIEW_TORN_DOWN`, or the revocation's own reason). A crash between record and
 * accept leaves a `RECORDED` message the store expires after `acceptWithinMs` (never delivered); a crash after accept
 * leaves an accepted message the View was not told of (no replay key: a retry is a new message).
 */
export class ViewMessages {
  constructor(
    private readonly bus: BusClient,
    private readonly barrier: ViewBarrier,
    private readonly windows: MinuteWindows,
    private readonly config: MessageConfig,
    private readonly faults: FaultPoints<GovernedFaultPoint>,
    private readonly logger: Logger,
  ) {}

  /** Advertised modalities, the size limit, the profile's `message` policy, then the per-View message rate. */
  async admit(ctx: ViewContext, target: MessageTarget, attested: readonly string[]): Promise<void> {
    this.contentOf(ctx, target);
    if (ctx.policy.callbacks.message === 'confirm' && !attested.includes('message'))
      throw new AppHostError('PERMISSION_DENIED', 'the host profile asks the user to confirm a message first', {
        details: GovernedReasons.details('MESSAGE_CONFIRMATION_REQUIRED'),
      });
    const { viewId } = ctx.view.record;
    await this.windows.count({ scope: 'message', key: `view-rpc:rate:message:${viewId}`, limit: this.config.perViewPerMinute }, Date.now());
  }

  /** Records, re-checks, accepts: `{}` only once the message is `ACCEPTED` in the lifecycle-store. */
  async deliver(ctx: ViewContext, pass: BarrierPass, target: MessageTarget, caller: ViewCaller): Promise<Record<string, never>> {
    const { record } = ctx.view;
    if (record.bindingRevision === null) throw revokedError('TOOLSET_REVOKED');
    const messageId = `msg-${randomBytes(16).toString('hex')}`;
    const message = {
      messageId,
      session: pass.session,
      incarnation: pass.incarnation,
      role: 'user' as const,
      content: this.contentOf(ctx, target),
      viewId: record.viewId,
      widgetId: record.widget.widgetId,
      nonce: randomBytes(16).toString('hex'),
      toolsetId: pass.generation.toolsetId,
      bindingRevision: record.bindingRevision,
      bindingGeneration: pass.generation.bindingGeneration,
      // The caller is the View's opener (authentication checked its grant): a claim re-checks this principal.
      principal: { tenant: caller.principal.tenant, subject: caller.principal.subject },
    };
    try {
      await this.bus.request(LifecycleRecordMessage, { message, acceptWithinMs: this.config.acceptWithinMs });
    } catch (error) {
      // The session moved on since the barrier (deleted, or recreated in a new incarnation): the View is revoked.
      if (isStaleSession(error)) await this.barrier.revoke(record.viewId, 'SESSION_DELETED');
      throw error;
    }
    await this.faults.hit('message.after-record');
    await this.recheck(ctx, pass, messageId, target, caller);
    await this.bus.request(LifecycleDecideMessage, { decision: 'accept', session: pass.session, messageId });
    await this.faults.hit('message.after-accept');
    this.logger.info({ viewId: record.viewId, widgetId: record.widget.widgetId, messageId }, 'view rpc: ui/message accepted');
    return {};
  }

  /** The barrier's liveness checks again; a View no longer live rejects the recorded message before refusing. */
  private async recheck(ctx: ViewContext, pass: BarrierPass, messageId: string, target: MessageTarget, caller: ViewCaller): Promise<void> {
    try {
      await this.barrier.check(ctx, target, caller);
    } catch (error) {
      const rejection = rejectionOf(error);
      // Not a refusal (a store that did not answer): the record is left to expire, never accepted.
      if (rejection === null) throw error;
      await this.bus.request(LifecycleDecideMessage, { decision: 'reject', session: pass.session, messageId, rejection }).catch((failure: unknown) => {
        this.logger.warn({ viewId: ctx.view.record.viewId, messageId, error: describeFailure(failure) }, 'view rpc: rejecting a message failed: it expires');
      });
      throw error;
    }
  }

  private contentOf(ctx: ViewContext, target: MessageTarget): MessageContent {
    const { offered } = offeredHostCapabilities(ctx.profile.hostCapabilities, IMPLEMENTED_HOST_CAPABILITIES);
    return messageContentOf(target.blocks, offered.message, this.config.maxBytes);
  }
}

/** Why a refused re-check rejects the message: the revocation's own reason where the store knows it, else a teardown. */
function rejectionOf(error: unknown): Rejection | null {
  if (!(error instanceof AppHostError) || !['FAILED_PRECONDITION', 'PERMISSION_DENIED', 'NOT_FOUND'].includes(error.code)) return null;
  const { reason, revocation } = error.details ?? {};
  if (reason === 'PRINCIPAL_REVOKED') return 'PRINCIPAL_REVOKED';
  if (reason === 'VIEW_REVOKED' && (revocation === 'SESSION_DELETED' || revocation === 'TOOLSET_REVOKED' || revocation === 'TOOLSET_REBOUND'))
    return revocation;
  return 'VIEW_TORN_DOWN';
}

function isStaleSession(error: unknown): boolean {
  return error instanceof AppHostError && (error.code === 'NOT_FOUND' || error.details?.['reason'] === 'STALE_INCARNATION');
}
