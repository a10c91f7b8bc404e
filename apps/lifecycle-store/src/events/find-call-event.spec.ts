import { LifecycleAppendEvents, LifecycleCreateSession, LifecycleDeleteSession, LifecycleFindCallEvent, type SessionKey } from '@apphost/contracts';
import { describeOnPostgres, expectAppError } from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';

jest.setTimeout(30_000);

describeOnPostgres('lifecycle-store find-call-event', (target) => {
  // Nested, so these hooks run inside the target's own (its server outlives the cleanup).
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
    const respond = (invocationId: string, id: string, extra: Record<string, unknown> = {}) => ({
      author: 'apphost',
      invocationId,
      functionResponses: [{ id, name: 'tool', response: { n: 1 } }],
      ...extra,
    });
    const find = (session: SessionKey, request: { callId: string; answering: 'response' | 'call'; invocationId?: string; afterEventId?: number }) =>
      h.client.request(LifecycleFindCallEvent, { session, incarnation: 1, ...request });

    it('finds the first event answering a call id (not a later one), optionally of one invocation and after an event', async () => {
      const key = await active();
      const confirmation = { id: 'cf-1', name: 'adk_request_confirmation', args: { originalFunctionCall: { id: 'c1' } } };
      // One append per event: an append refuses a function-response id twice.
      const eventIds: number[] = [];
      for (const event of [
        respond('inv-0', 'c1'),
        respond('inv-1', 'c1', { functionCalls: [confirmation], customMetadata: { batch: 'first' } }),
        respond('inv-1', 'c1', { customMetadata: { batch: 'decision' } }),
      ])
        eventIds.push(
          ...(await h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [event] })).eventIds,
        );
      expect((await find(key, { callId: 'c1', answering: 'response' })).event?.eventId).toBe(eventIds[0]);
      const own = await find(key, { callId: 'c1', answering: 'response', invocationId: 'inv-1' });
      expect(own.event).toEqual({
        eventId: eventIds[1],
        invocationId: 'inv-1',
        functionCalls: [confirmation],
        functionResponses: [{ id: 'c1', name: 'tool', response: { n: 1 } }],
        widgets: [],
        customMetadata: { batch: 'first' },
      });
      expect((await find(key, { callId: 'cf-1', answering: 'call' })).event?.eventId).toBe(eventIds[1]);
      expect((await find(key, { callId: 'c1', answering: 'response', afterEventId: eventIds[1] })).event?.eventId).toBe(eventIds[2]);
      expect(await find(key, { callId: 'c1', answering: 'response', afterEventId: eventIds[2] })).toEqual({ event: null });
      expect(await find(key, { callId: 'cf-1', answering: 'response' })).toEqual({ event: null });
      expect(await find(key, { callId: 'c2', answering: 'response' })).toEqual({ event: null });
    });

    it('the lookup is indexed: both GIN indexes exist in the service schema', async () => {
      const rows = await h.sql<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'session_events'`, [h.schema]);
      expect(rows.map((r) => r.indexname)).toEqual(expect.arrayContaining(['session_events_function_calls', 'session_events_function_responses']));
    });

    it('another incarnation is FAILED_PRECONDITION (STALE_INCARNATION); an unknown session is NOT_FOUND', async () => {
      const key = await active();
      await h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [respond('inv', 'c1')] });
      await expectAppError(
        h.client.request(LifecycleFindCallEvent, { session: key, incarnation: 2, callId: 'c1', answering: 'response' }),
        'FAILED_PRECONDITION',
        'STALE_INCARNATION',
      );
      await h.client.request(LifecycleDeleteSession, { session: key });
      await expectAppError(find(key, { callId: 'c1', answering: 'response' }), 'NOT_FOUND');
      await expectAppError(find(h.key(), { callId: 'c1', answering: 'response' }), 'NOT_FOUND');
    });
  });
});
