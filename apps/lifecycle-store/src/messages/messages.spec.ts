import { randomBytes } from 'node:crypto';
import {
  LifecycleClaimMessage,
  LifecycleConsumeMessage,
  LifecycleCreateSession,
  LifecycleDecideMessage,
  LifecycleDeleteSession,
  LifecycleFindConsumedMessage,
  LifecycleGetMessage,
  LifecycleListMessages,
  LifecycleRecordMessage,
  type ErrorCode,
  type RequestOf,
  type SessionKey,
} from '@apphost/contracts';
import { describeOnPostgres, expectAppError } from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';
import { MessageWaiter } from './message-waiter';

jest.setTimeout(30_000);

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
type NewMessage = RequestOf<typeof LifecycleRecordMessage>['message'];

/** The typed refusal, with (at least) these details. */
async function expectRefused(work: Promise<unknown>, code: ErrorCode, details: Record<string, unknown> = {}): Promise<void> {
  const error = await expectAppError(work, code, details['reason'] as string | undefined);
  expect(error.details ?? {}).toMatchObject(details);
}

describeOnPostgres('lifecycle-store pending messages', (target) => {
  // Nested, so these hooks run inside the target's own (its server outlives the cleanup).
  describe('through the bus', () => {
    const h = new LifecycleHarness(target);

    beforeAll(() => h.start(), 60_000);
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    const waiter = () => h.service.running.app.get(MessageWaiter);
    afterEach(() => {
      waiter().recheckMs = 1_000;
    });

    async function activeSession(): Promise<SessionKey> {
      const key = h.key('m');
      await h.client.request(LifecycleCreateSession, { session: key, creationOperationId: `op-${key.sessionId}` });
      return key;
    }
    const messageOf = (session: SessionKey, overrides: Partial<NewMessage> = {}): NewMessage => ({
      messageId: `msg-${hex(16)}`,
      session,
      incarnation: 1,
      role: 'user',
      content: [{ type: 'text', text: 'the export finished: summarise it' }],
      viewId: `vw-${hex(16)}`,
      widgetId: '2:fc-1',
      nonce: hex(16),
      toolsetId: 'ts',
      bindingRevision: 'v1.k1.abcd',
      bindingGeneration: 1,
      principal: { tenant: 'acme', subject: 'alice' },
      ...overrides,
    });
    const record = (message: NewMessage, acceptWithinMs = 30_000) => h.client.request(LifecycleRecordMessage, { message, acceptWithinMs });
    const accept = (session: SessionKey, messageId: string) => h.client.request(LifecycleDecideMessage, { decision: 'accept', session, messageId });
    const claim = (session: SessionKey, messageId: string, claimTtlMs = 60_000) => h.client.request(LifecycleClaimMessage, { session, messageId, claimTtlMs });
    const consume = (session: SessionKey, messageId: string, claimToken: string, invocationId: string) =>
      h.client.request(LifecycleConsumeMessage, { session, messageId, claimToken, invocationId });
    const list = (request: Omit<RequestOf<typeof LifecycleListMessages>, 'waitMs' | 'limit'> & { waitMs?: number }) =>
      h.client.request(LifecycleListMessages, { waitMs: 0, limit: 50, ...request }, { timeoutMs: 20_000 });
    async function acceptedMessage(session: SessionKey) {
      const message = messageOf(session);
      await record(message);
      await accept(session, message.messageId);
      return message;
    }
    /** Moves a message's timestamps into the past, as time passing would (the store compares them with `now()`). */
    const age = (messageId: string, column: 'accept_by' | 'accepted_at' | 'claim_expires_at', ms: number) =>
      h.sql(`UPDATE pending_messages SET ${column} = ${column} - make_interval(secs => $2::float8 / 1000) WHERE message_id = $1`, [messageId, ms]);

    it('records RECORDED, idempotently on the same message; the same id with other content is CONFLICT MESSAGE_ID_REUSED', async () => {
      const session = await activeSession();
      const message = messageOf(session);
      const first = await record(message);
      expect(first.message).toMatchObject({ ...message, state: 'RECORDED', rejection: null, claimExpiresAt: null, invocationId: null });
      await expect(record(message)).resolves.toEqual(first);
      await expectRefused(record({ ...message, content: [{ type: 'text', text: 'something else' }] }), 'CONFLICT', { reason: 'MESSAGE_ID_REUSED' });
      await expectRefused(record({ ...message, nonce: hex(16) }), 'CONFLICT', { reason: 'MESSAGE_ID_REUSED' });
      // RECORDED is internal: no runtime sees it.
      await expect(list({ session })).resolves.toEqual({ incarnation: 1, messages: [] });
      await expect(h.client.request(LifecycleGetMessage, { session, messageId: message.messageId })).resolves.toEqual(first);
    });

    it('accept → ACCEPTED (idempotent); reject → REJECTED with its reason (idempotent, the first reason stays); a rejected one is not acceptable', async () => {
      const session = await activeSession();
      const message = messageOf(session);
      await record(message);
      const accepted = await accept(session, message.messageId);
      expect(accepted.message).toMatchObject({ state: 'ACCEPTED', rejection: null });
      await expect(accept(session, message.messageId)).resolves.toMatchObject({ message: { state: 'ACCEPTED' } });
      await expect(list({ session, state: 'ACCEPTED' })).resolves.toMatchObject({ messages: [{ messageId: message.messageId, state: 'ACCEPTED' }] });

      const rejected = await h.client.request(LifecycleDecideMessage, {
        decision: 'reject',
        session,
        messageId: message.messageId,
        rejection: 'TOOLSET_REBOUND',
      });
      expect(rejected.message).toMatchObject({ state: 'REJECTED', rejection: 'TOOLSET_REBOUND' });
      await expect(
        h.client.request(LifecycleDecideMessage, { decision: 'reject', session, messageId: message.messageId, rejection: 'PRINCIPAL_REVOKED' }),
      ).resolves.toMatchObject({ message: { state: 'REJECTED', rejection: 'TOOLSET_REBOUND' } });
      await expectRefused(accept(session, message.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_NOT_ACCEPTABLE', state: 'REJECTED' });
      await expectRefused(claim(session, message.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_NOT_CLAIMABLE', state: 'REJECTED' });

      // A View torn down between record and accept: its message is rejected and never accepted.
      const queued = messageOf(session);
      await record(queued);
      await h.client.request(LifecycleDecideMessage, { decision: 'reject', session, messageId: queued.messageId, rejection: 'VIEW_TORN_DOWN' });
      await expectRefused(accept(session, queued.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_NOT_ACCEPTABLE', state: 'REJECTED' });
      await expectRefused(accept(session, `msg-${hex(16)}`), 'NOT_FOUND');
    });

    it('a RECORDED message not accepted in time reads EXPIRED and cannot be accepted; an ACCEPTED one past the retention reads EXPIRED', async () => {
      const session = await activeSession();
      const late = messageOf(session);
      await record(late, 1_000);
      await age(late.messageId, 'accept_by', 2_000);
      await expectRefused(accept(session, late.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_NOT_ACCEPTABLE', state: 'EXPIRED' });
      await expect(list({ session })).resolves.toMatchObject({ messages: [{ messageId: late.messageId, state: 'EXPIRED' }] });

      const stale = await acceptedMessage(session);
      await age(stale.messageId, 'accepted_at', 25 * 3600 * 1000); // the default retention is a day
      await expect(list({ session, state: 'ACCEPTED' })).resolves.toMatchObject({ messages: [] });
      await expect(h.client.request(LifecycleGetMessage, { session, messageId: stale.messageId })).resolves.toMatchObject({ message: { state: 'EXPIRED' } });
      await expectRefused(claim(session, stale.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_NOT_CLAIMABLE', state: 'EXPIRED' });
    });

    it('a long poll answers as soon as a message is accepted, and empty when waitMs passes', async () => {
      const session = await activeSession();
      waiter().recheckMs = 60_000; // only the wake-up can answer in time
      const message = messageOf(session);
      await record(message);
      const started = Date.now();
      const polled = list({ session, state: 'ACCEPTED', waitMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const acceptedAt = Date.now();
      await accept(session, message.messageId);
      const answer = await polled;
      expect(answer.messages.map((m) => m.messageId)).toEqual([message.messageId]);
      expect(Date.now() - acceptedAt).toBeLessThan(1_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(200);

      const empty = Date.now();
      await expect(list({ session, state: 'CONSUMED', waitMs: 400 })).resolves.toEqual({ incarnation: 1, messages: [] });
      const waited = Date.now() - empty;
      expect(waited).toBeGreaterThanOrEqual(380);
      expect(waited).toBeLessThan(3_000);
    });

    it("a long poll wakes on another replica's change (the statement's NOTIFY), not only on its own", async () => {
      const session = await activeSession();
      waiter().recheckMs = 60_000;
      const message = messageOf(session);
      await record(message);
      const polled = list({ session, state: 'ACCEPTED', waitMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const changedAt = Date.now();
      // What another replica's accept does: the guarded update and its notification, committed together.
      await h.sql(
        `WITH m AS (UPDATE pending_messages SET state = 'ACCEPTED', accepted_at = now() WHERE message_id = $1 RETURNING 1)
         SELECT pg_notify('apphost_pending_messages', json_build_array(current_schema(), $2::text, $3::text, $4::text, $5::text)::text) FROM m`,
        [message.messageId, session.tenant, session.appName, session.userId, session.sessionId],
      );
      expect((await polled).messages.map((m) => m.messageId)).toEqual([message.messageId]);
      expect(Date.now() - changedAt).toBeLessThan(1_000);
    });

    it('a long poll is bounded by the request deadline: it answers (empty) before the caller gives up', async () => {
      const session = await activeSession();
      const started = Date.now();
      const answer = await h.client.request(LifecycleListMessages, { session, state: 'ACCEPTED', waitMs: 30_000, limit: 50 }, { timeoutMs: 1_500 });
      expect(answer.messages).toEqual([]);
      expect(Date.now() - started).toBeLessThan(1_500);
    });

    it('a long poll in flight when the service stops answers at once (empty), not at the end of the shutdown grace', async () => {
      const session = await activeSession();
      const polled = list({ session, state: 'ACCEPTED', waitMs: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stopping = Date.now();
      const restarted = h.restart();
      await expect(polled).resolves.toEqual({ incarnation: 1, messages: [] });
      expect(Date.now() - stopping).toBeLessThan(1_500);
      await restarted;
    });

    it('concurrent claimers: exactly one wins, every other gets CONFLICT MESSAGE_CLAIMED', async () => {
      const session = await activeSession();
      const message = await acceptedMessage(session);
      const answers = await Promise.allSettled(Array.from({ length: 6 }, () => claim(session, message.messageId)));
      const won = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
      expect(won).toHaveLength(1);
      expect(won[0].claimToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(won[0].message).toMatchObject({ state: 'CLAIMED', claimExpiresAt: won[0].claimExpiresAt });
      for (const lost of answers.filter((a) => a.status === 'rejected'))
        expect((lost as PromiseRejectedResult).reason).toMatchObject({ code: 'CONFLICT', details: { reason: 'MESSAGE_CLAIMED' } });
      // Only a digest of the token is stored.
      const rows = await h.sql<{ whole: string; claim_digest: string }>(
        `SELECT row_to_json(m)::text AS whole, claim_digest FROM pending_messages m WHERE message_id = $1`,
        [message.messageId],
      );
      expect(rows[0].whole).not.toContain(won[0].claimToken);
      expect(rows[0].claim_digest).toMatch(/^[0-9a-f]{64}$/);
    });

    it('an expired claim reads ACCEPTED again and is claimable; the old token no longer consumes', async () => {
      const session = await activeSession();
      const message = await acceptedMessage(session);
      const first = await claim(session, message.messageId, 1_000);
      await age(message.messageId, 'claim_expires_at', 2_000);
      await expect(list({ session, state: 'ACCEPTED' })).resolves.toMatchObject({
        messages: [{ messageId: message.messageId, state: 'ACCEPTED', claimExpiresAt: null }],
      });
      await expectRefused(consume(session, message.messageId, first.claimToken, 'inv-late'), 'CONFLICT', { reason: 'MESSAGE_CLAIM_INVALID' });
      const second = await claim(session, message.messageId);
      expect(second.claimToken).not.toBe(first.claimToken);
      await expectRefused(consume(session, message.messageId, first.claimToken, 'inv-late'), 'CONFLICT', { reason: 'MESSAGE_CLAIM_INVALID' });
      await expect(consume(session, message.messageId, second.claimToken, 'inv-2')).resolves.toMatchObject({ message: { state: 'CONSUMED' } });
    });

    it('consumes exactly once: the same token and invocation again answers the same; another invocation, a foreign token: CONFLICT', async () => {
      const session = await activeSession();
      const message = await acceptedMessage(session);
      const other = await acceptedMessage(session);
      const { claimToken } = await claim(session, message.messageId);
      const { claimToken: otherToken } = await claim(session, other.messageId);
      const invocationId = `inv-${hex(4)}`;
      // The other message's token does not fit this one.
      await expectRefused(consume(session, message.messageId, otherToken, invocationId), 'CONFLICT', { reason: 'MESSAGE_CLAIM_INVALID', state: 'CLAIMED' });

      const consumed = await consume(session, message.messageId, claimToken, invocationId);
      expect(consumed.message).toMatchObject({ state: 'CONSUMED', invocationId });
      await expect(consume(session, message.messageId, claimToken, invocationId)).resolves.toEqual(consumed);
      await expectRefused(consume(session, message.messageId, claimToken, 'inv-other'), 'CONFLICT', { reason: 'MESSAGE_CLAIM_INVALID', state: 'CONSUMED' });
      await expectRefused(consume(session, message.messageId, randomBytes(32).toString('base64url'), invocationId), 'CONFLICT', {
        reason: 'MESSAGE_CLAIM_INVALID',
      });
      await expectRefused(claim(session, message.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_NOT_CLAIMABLE', state: 'CONSUMED' });
      await expectRefused(
        h.client.request(LifecycleDecideMessage, { decision: 'reject', session, messageId: message.messageId, rejection: 'VIEW_TORN_DOWN' }),
        'FAILED_PRECONDITION',
        { reason: 'MESSAGE_CONSUMED' },
      );

      await expect(h.client.request(LifecycleFindConsumedMessage, { session, invocationId })).resolves.toEqual({ message: consumed.message });
      await expect(h.client.request(LifecycleFindConsumedMessage, { session, invocationId: 'inv-never' })).resolves.toEqual({ message: null });
      await expect(list({ session, state: 'CONSUMED' })).resolves.toMatchObject({ messages: [{ messageId: message.messageId }] });
    });

    it('an expired claim cannot consume, even before anyone re-claims', async () => {
      const session = await activeSession();
      const message = await acceptedMessage(session);
      const { claimToken } = await claim(session, message.messageId, 1_000);
      await age(message.messageId, 'claim_expires_at', 2_000);
      await expectRefused(consume(session, message.messageId, claimToken, 'inv-1'), 'CONFLICT', { reason: 'MESSAGE_CLAIM_INVALID', state: 'ACCEPTED' });
    });

    it('is incarnation-scoped: a deleted session answers NOT_FOUND, a re-created one refuses the old incarnation; deletion removes the messages', async () => {
      const session = await activeSession();
      const message = await acceptedMessage(session);
      const queued = messageOf(session);
      await record(queued);
      const rows = () => h.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pending_messages WHERE session_id = $1`, [session.sessionId]);
      await expect(rows()).resolves.toEqual([{ n: 2 }]);

      await h.client.request(LifecycleDeleteSession, { session });
      await expect(rows()).resolves.toEqual([{ n: 0 }]);
      await expectRefused(claim(session, message.messageId), 'NOT_FOUND');
      await expectRefused(list({ session }), 'NOT_FOUND');
      await expectRefused(record(messageOf(session)), 'NOT_FOUND');

      await h.client.request(LifecycleCreateSession, { session, creationOperationId: `op2-${session.sessionId}` });
      await expectRefused(record(messageOf(session)), 'FAILED_PRECONDITION', { reason: 'STALE_INCARNATION', incarnation: 2 });
      await expectRefused(list({ session, incarnation: 1 }), 'FAILED_PRECONDITION', { reason: 'STALE_INCARNATION' });
      await expectRefused(accept(session, message.messageId), 'NOT_FOUND');
      await expect(list({ session })).resolves.toEqual({ incarnation: 2, messages: [] });
      const fresh = messageOf(session, { incarnation: 2 });
      await expect(record(fresh)).resolves.toMatchObject({ message: { incarnation: 2, state: 'RECORDED' } });
    });
  });
});
