import { LifecycleAppendEvents, LifecycleCreateSession, LifecycleDeleteSession, LifecycleOpenBatch, type SessionKey } from '@apphost/contracts';
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

    it('a deleted or unknown session is NOT_FOUND', async () => {
      const key = await active();
      await h.client.request(LifecycleDeleteSession, { session: key });
      await expectAppError(h.client.request(LifecycleOpenBatch, { session: key, invocationId: 'inv', callId: 'c1' }), 'NOT_FOUND');
      await expectAppError(h.client.request(LifecycleOpenBatch, { session: h.key(), invocationId: 'inv', callId: 'c1' }), 'NOT_FOUND');
    });
  });
});
