import { randomBytes } from 'node:crypto';
import {
  LifecycleAppendEvents,
  LifecycleClaimMessage,
  LifecycleConsumeMessage,
  LifecycleCreateSession,
  LifecycleDecideMessage,
  LifecycleDeleteSession,
  LifecycleOpenBatch,
  LifecycleRecordMessage,
  type SessionKey,
} from '@apphost/contracts';
import { describeOnPostgres, expectAppError } from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';

jest.setTimeout(30_000);

/** `open-batch`: a batch's opening reads (incarnation, consumed message, its own earlier event) in one request. */
describeOnPostgres('lifecycle-store open-batch', (target) => {
  describe('through the bus', () => {
    const h = new LifecycleHarness(target);

    beforeAll(() => h.start(), 60_000);
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    async function active(): Promise<SessionKey> {
      const key = h.key();
      await h.client.request(LifecycleCreateSession, { session: key, creationOperationId: `op-${key.sessionId}` });
      return key;
    }
    const respond = (invocationId: string, id: string) => ({
      author: 'apphost',
      invocationId,
      functionResponses: [{ id, name: 'tool', response: { n: 1 } }],
      customMetadata: { batch: invocationId },
    });

    it('answers the ACTIVE incarnation, no consumed message, and the first event of this invocation answering the call', async () => {
      const key = await active();
      expect(await h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv-1', callId: 'c1' })).toEqual({
        incarnation: 1,
        consumedMessage: null,
        event: null,
      });
      const appended = await h.client.request(LifecycleAppendEvents, {
        session: key,
        incarnation: 1,
        provenance: { path: 'user-turn' },
        events: [respond('inv-0', 'c1'), respond('inv-1', 'c2')],
      });
      await h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [respond('inv-1', 'c1')] });
      const opened = await h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv-1', callId: 'c2' });
      expect(opened.event).toEqual({
        eventId: appended.eventIds[1],
        invocationId: 'inv-1',
        functionCalls: [],
        functionResponses: [{ id: 'c2', name: 'tool', response: { n: 1 } }],
        widgets: [],
        customMetadata: { batch: 'inv-1' },
      });
      // Of this invocation only: inv-0's answer to c1 is not inv-1's.
      expect((await h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv-1', callId: 'c1' })).event?.eventId).toBeGreaterThan(
        appended.eventIds[1],
      );
    });

    /** A message of the View's, consumed by `invocationId` in `incarnation`. */
    async function consumed(key: SessionKey, incarnation: number, invocationId: string) {
      const messageId = `msg-${randomBytes(16).toString('hex')}`;
      await h.client.request(LifecycleRecordMessage, {
        acceptWithinMs: 30_000,
        message: {
          messageId,
          session: key,
          incarnation,
          role: 'user',
          content: [{ type: 'text', text: `from incarnation ${incarnation}` }],
          viewId: `vw-${randomBytes(16).toString('hex')}`,
          widgetId: '2:fc-1',
          nonce: randomBytes(16).toString('hex'),
          toolsetId: 'ts',
          bindingRevision: 'v1.k1.abcd',
          bindingGeneration: 1,
          principal: { tenant: key.tenant, subject: key.userId },
        },
      });
      await h.client.request(LifecycleDecideMessage, { decision: 'accept', session: key, messageId });
      const { claimToken } = await h.client.request(LifecycleClaimMessage, { session: key, messageId, claimTtlMs: 60_000 });
      return (await h.client.request(LifecycleConsumeMessage, { session: key, messageId, claimToken, invocationId })).message;
    }

    it('answers the message this invocation consumed and its event, of the current incarnation only', async () => {
      const key = await active();
      const first = await consumed(key, 1, 'inv-1');
      await h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [respond('inv-1', 'c1')] });
      await expect(h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv-1', callId: 'c1' })).resolves.toMatchObject({
        incarnation: 1,
        consumedMessage: first,
        event: { invocationId: 'inv-1', functionResponses: [{ id: 'c1' }] },
      });
      expect((await h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv-2', callId: 'c1' })).consumedMessage).toBeNull();

      // Deleted and created again: the same invocation id names nothing of incarnation 1 any more.
      await h.client.request(LifecycleDeleteSession, { session: key });
      await h.client.request(LifecycleCreateSession, {
        session: key,
        creationOperationId: `op-${key.sessionId}-2`,
        expectedPrior: { state: 'DELETED', incarnation: 1 },
      });
      expect(await h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv-1', callId: 'c1' })).toEqual({
        incarnation: 2,
        consumedMessage: null,
        event: null,
      });
      const second = await consumed(key, 2, 'inv-1');
      expect(second.incarnation).toBe(2);
      expect((await h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv-1', callId: 'c1' })).consumedMessage).toEqual(second);
    });

    it('as the first touch of a legacy session row, adopts it as ACTIVE(1) and reads its ledger', async () => {
      const key = await h.legacySession();
      expect(await h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv-1', callId: 'c1' })).toEqual({
        incarnation: 1,
        consumedMessage: null,
        event: null,
      });
      await h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [respond('inv-1', 'c1')] });
      expect((await h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv-1', callId: 'c1' })).event).toMatchObject({
        invocationId: 'inv-1',
      });
    });

    it('a deleted or unknown session is NOT_FOUND', async () => {
      const key = await active();
      await h.client.request(LifecycleDeleteSession, { session: key });
      await expectAppError(h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv', callId: 'c1' }), 'NOT_FOUND');
      await expectAppError(h.client.request(LifecycleOpenBatch, { session: h.key(), invocationId: 'inv', callId: 'c1' }), 'NOT_FOUND');
    });
  });
});
