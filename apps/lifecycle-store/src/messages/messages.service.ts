import { randomBytes } from 'node:crypto';
import { RequestContexts } from '@apphost/bus';
import { canonicalDigest } from '@apphost/canonical-json';
import {
  AppHostError,
  type LifecycleClaimMessage,
  type LifecycleConsumeMessage,
  type LifecycleDecideMessage,
  type LifecycleEndViewMessages,
  type LifecycleListMessages,
  type LifecycleRecordMessage,
  type MessageState,
  type ParsedRequestOf,
  type PendingMessage,
  type ResponseOf,
  type SessionKey,
} from '@apphost/contracts';
import { admissible } from '../events/events.service';
import type { LifecycleMetrics } from '../metrics';
import { loadOrAdopt } from '../sessions/adoption';
import type { LifecycleRecord, LifecycleRepository } from '../sessions/lifecycle.repository';
import { conflict, failedPrecondition, notFound } from '../sessions/replies';
import type { MessageRepository, StoredMessage } from './message.repository';
import type { MessageWaiter } from './message-waiter';

/** What a long poll leaves of the caller's deadline, so its (empty) answer still arrives in time. */
const DEADLINE_MARGIN_MS = 250;

export interface MessagesDeps {
  repo: LifecycleRepository;
  messages: MessageRepository;
  waiter: MessageWaiter;
  metrics: LifecycleMetrics;
}

/** What an idempotent `record-message` must repeat exactly: the whole message as recorded. */
export function recordDigestOf(message: ParsedRequestOf<typeof LifecycleRecordMessage>['message']): string {
  return canonicalDigest('replay-identity', { kind: 'apphost.lifecycle-store.pending-message.v1', ...message });
}

/** The stored form of a claim token: purpose-tagged, bound to its message (a token of one message never fits another). */
export function claimDigestOf(messageId: string, claimToken: string): string {
  return canonicalDigest('replay-identity', { kind: 'apphost.lifecycle-store.message-claim.v1', messageId, claimToken });
}

const messageNotFound = (messageId: string) => new AppHostError('NOT_FOUND', `message ${messageId} does not exist in this session`);

/**
 * Pending `ui/message`s: every write is one conditional statement (see `MessageRepository`); when it applies nothing,
 * the session record and the message as it is now say why, and an operation that already happened answers the same.
 */
export class MessagesService {
  constructor(private readonly deps: MessagesDeps) {}

  async record(req: ParsedRequestOf<typeof LifecycleRecordMessage>): Promise<ResponseOf<typeof LifecycleRecordMessage>> {
    const digest = recordDigestOf(req.message);
    const recorded = await this.deps.messages.record(req.message, digest, req.acceptWithinMs);
    if (recorded) return { message: recorded.message };
    await this.activeIn(req.message.session, req.message.incarnation);
    const existing = await this.deps.messages.one(req.message.session, req.message.messageId);
    if (existing) {
      if (existing.recordDigest !== digest || existing.message.incarnation !== req.message.incarnation)
        throw conflict('MESSAGE_ID_REUSED', `message ${req.message.messageId} was recorded with other content`);
      return { message: existing.message };
    }
    // ACTIVE(n) now but not at the insert: a legacy session adopted just now.
    const retried = await this.deps.messages.record(req.message, digest, req.acceptWithinMs);
    if (retried) return { message: retried.message };
    throw failedPrecondition('STALE_INCARNATION', `session ${req.message.session.sessionId} changed while recording; re-read it`);
  }

  async get(session: SessionKey, messageId: string): Promise<{ message: PendingMessage }> {
    return { message: (await this.current(session, messageId)).message };
  }

  async decide(req: ParsedRequestOf<typeof LifecycleDecideMessage>): Promise<ResponseOf<typeof LifecycleDecideMessage>> {
    const { session, messageId } = req;
    const changed =
      req.decision === 'accept' ? await this.deps.messages.accept(session, messageId) : await this.deps.messages.reject(session, messageId, req.rejection);
    if (changed) return this.changed(session, changed);
    let { message } = await this.current(session, messageId);
    if (req.decision === 'accept' && message.state === 'RECORDED') {
      // Its View was ended (the accept found the teardown's tombstone): the message dies with the View.
      const fenced = await this.deps.messages.rejectOfEndedView(session, messageId);
      message = fenced ? this.changed(session, fenced).message : (await this.current(session, messageId)).message;
    }
    if (req.decision === 'accept') {
      if (message.state === 'ACCEPTED' || message.state === 'CLAIMED' || message.state === 'CONSUMED') return { message };
      if (message.state === 'EXPIRED' || message.state === 'REJECTED')
        throw failedPrecondition('MESSAGE_NOT_ACCEPTABLE', `message ${messageId} is ${message.state}`, { state: message.state, rejection: message.rejection });
    } else {
      if (message.state === 'REJECTED') return { message };
      if (message.state === 'CONSUMED')
        throw failedPrecondition('MESSAGE_CONSUMED', `message ${messageId} was consumed by a model turn`, { state: 'CONSUMED' });
    }
    throw raced(session, message.state);
  }

  /** The teardown fence of a View's messages (see `MessageRepository.endView`); idempotent. */
  async endView(req: ParsedRequestOf<typeof LifecycleEndViewMessages>): Promise<ResponseOf<typeof LifecycleEndViewMessages>> {
    const rejected = await this.deps.messages.endView(req.session, req.viewId, req.rejection);
    if (rejected > 0) this.deps.waiter.changed(req.session);
    return { rejected };
  }

  async claim(req: ParsedRequestOf<typeof LifecycleClaimMessage>): Promise<ResponseOf<typeof LifecycleClaimMessage>> {
    const claimToken = randomBytes(32).toString('base64url');
    const claimed = await this.deps.messages.claim(req.session, req.messageId, claimDigestOf(req.messageId, claimToken), req.claimTtlMs);
    if (claimed) {
      const { message } = this.changed(req.session, claimed);
      return { message, claimToken, claimExpiresAt: message.claimExpiresAt as string };
    }
    const { message } = await this.current(req.session, req.messageId);
    if (message.state === 'CLAIMED')
      throw conflict('MESSAGE_CLAIMED', `message ${req.messageId} is claimed by another runtime`, { claimExpiresAt: message.claimExpiresAt });
    if (message.state !== 'ACCEPTED')
      throw failedPrecondition('MESSAGE_NOT_CLAIMABLE', `message ${req.messageId} is ${message.state}`, { state: message.state, rejection: message.rejection });
    throw raced(req.session, message.state);
  }

  async consume(req: ParsedRequestOf<typeof LifecycleConsumeMessage>): Promise<ResponseOf<typeof LifecycleConsumeMessage>> {
    const digest = claimDigestOf(req.messageId, req.claimToken);
    const consumed = await this.deps.messages.consume(req.session, req.messageId, digest, req.invocationId);
    if (consumed) return this.changed(req.session, consumed);
    const { message, claimDigest } = await this.current(req.session, req.messageId);
    // The same token and invocation again: the answer it already had.
    if (message.state === 'CONSUMED' && claimDigest === digest && message.invocationId === req.invocationId) return { message };
    throw conflict('MESSAGE_CLAIM_INVALID', `the claim on message ${req.messageId} is expired, foreign or superseded`, { state: message.state });
  }

  /**
   * The session's messages now; with `waitMs`, a long poll that answers as soon as one matches, or empty once `waitMs`
   * (bounded by the request's deadline) passed. The wake-up is armed before each read, so no change is missed.
   */
  async list(req: ParsedRequestOf<typeof LifecycleListMessages>): Promise<ResponseOf<typeof LifecycleListMessages>> {
    const remaining = RequestContexts.remainingMs();
    const until = Date.now() + Math.max(0, Math.min(req.waitMs, remaining === undefined ? req.waitMs : remaining - DEADLINE_MARGIN_MS));
    for (;;) {
      const record = await this.activeIn(req.session, req.incarnation);
      const left = until - Date.now();
      const armed = left > 0 && !this.deps.waiter.stopping ? await this.deps.waiter.nextChange(req.session, left) : null;
      const messages = await this.deps.messages.list(req.session, record.incarnation, (req.state ?? null) as MessageState | null, req.limit);
      if (messages.length > 0 || !armed) return { incarnation: record.incarnation, messages };
      await armed.changed;
    }
  }

  async findConsumed(session: SessionKey, invocationId: string): Promise<{ message: PendingMessage | null }> {
    const record = await loadOrAdopt(this.deps.repo, this.deps.metrics, session);
    if (!record || record.state !== 'ACTIVE') throw notFound(session);
    return { message: await this.deps.messages.consumedBy(session, record.incarnation, invocationId) };
  }

  /** The messages' retention, which every read of a message binds (`open-batch` reads one in its own statement). */
  get retentionMs(): number {
    return this.deps.messages.retentionMs;
  }

  /** Wakes this process's long polls of the session (other replicas hear the statement's NOTIFY). */
  private changed(session: SessionKey, stored: StoredMessage): { message: PendingMessage } {
    this.deps.waiter.changed(session);
    return { message: stored.message };
  }

  /**
   * The session must be `ACTIVE(incarnation)` (default: its current one), as for the ledger: else NOT_FOUND,
   * SESSION_CREATING or STALE_INCARNATION.
   */
  private async activeIn(session: SessionKey, incarnation?: number): Promise<LifecycleRecord> {
    const record = await loadOrAdopt(this.deps.repo, this.deps.metrics, session);
    if (!record || record.state === 'DELETED') throw notFound(session);
    admissible(record, incarnation ?? record.incarnation);
    return record;
  }

  /** The message as it is now, in the session's current `ACTIVE` incarnation (else the ledger's errors). */
  private async current(session: SessionKey, messageId: string): Promise<StoredMessage> {
    const record = await loadOrAdopt(this.deps.repo, this.deps.metrics, session);
    if (!record || record.state === 'DELETED') throw notFound(session);
    const stored = await this.deps.messages.one(session, messageId);
    admissible(record, stored?.message.incarnation ?? record.incarnation);
    if (!stored) throw messageNotFound(messageId);
    return stored;
  }
}

/** The guarded write missed, yet the message now reads as if it should have applied: the session moved meanwhile. */
function raced(session: SessionKey, state: MessageState): AppHostError {
  return failedPrecondition('STALE_INCARNATION', `session ${session.sessionId} changed during the operation (message ${state}); re-read it`);
}
