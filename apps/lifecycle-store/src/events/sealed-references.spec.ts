import {
  LifecycleAppendEvents,
  LifecycleCreateSession,
  LifecycleDeleteSession,
  LifecycleWhichReferencesAreAppended,
  type LedgerEventInput,
  type SessionKey,
} from '@apphost/contracts';
import { describeOnPostgres } from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';

const record = (label: string) => `rec_${label.padEnd(22, 'x')}`;
const respond = (...ids: string[]) => ids.map((id) => ({ id, name: 'show', response: { content: [] } }));
const descriptor = (functionCallId: string, recordId: string) => ({
  schemaVersion: 1 as const,
  resourceUri: 'ui://dash/view.html',
  correlation: { invocationId: 'inv-1', functionCallId },
  serverId: 'srv',
  toolsetId: 'ts',
  bindingRevision: 'k1:abc',
  sealedResultRef: { recordId, schemaVersion: 1 },
});

/** The ledger's answer to the sealed store's GC and recovery pass, on real PostgreSQL (both targets) through the bus. */
describeOnPostgres('lifecycle-store which-references-are-appended', (target) => {
  // An inner block, so its cleanup (the harness's own pg connection) runs before the embedded server stops.
  describe('through the bus', () => {
    const h = new LifecycleHarness(target);

    beforeAll(() => h.start(), 60_000);
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    const append = async (session: SessionKey, incarnation: number, event: LedgerEventInput) =>
      (await h.client.request(LifecycleAppendEvents, { session, incarnation, provenance: { path: 'user-turn' }, events: [event] })).eventIds[0];
    const ask = async (references: { session: SessionKey; incarnation: number; functionCallId: string; recordId: string }[]) =>
      (await h.client.request(LifecycleWhichReferencesAreAppended, { references })).appended.sort((a, b) => a.recordId.localeCompare(b.recordId));

    it('names the event for both placements, and only under the exact session, incarnation and function call', async () => {
      const a = h.key('a');
      const b = h.key('b');
      for (const s of [a, b]) await h.client.request(LifecycleCreateSession, { session: s, creationOperationId: `op-${s.sessionId}` });
      const [r1, r2, r3] = [record('one'), record('two'), record('three')];
      const first = await append(a, 1, {
        author: 'agent',
        functionResponses: respond('fc1', 'fc2'),
        widgets: [descriptor('fc1', r1)],
        sealedResultRefs: { fc2: { recordId: r2, schemaVersion: 1 } },
      });
      const second = await append(a, 1, { author: 'agent', functionResponses: respond('fc3'), widgets: [descriptor('fc3', r3)] });
      await append(a, 1, { author: 'agent', content: { parts: [{ text: 'no references' }] } });

      expect(
        await ask([
          { session: a, incarnation: 1, functionCallId: 'fc1', recordId: r1 },
          { session: a, incarnation: 1, functionCallId: 'fc2', recordId: r2 },
          { session: a, incarnation: 1, functionCallId: 'fc3', recordId: r3 },
        ]),
      ).toEqual(
        [
          { recordId: r1, eventId: first },
          { recordId: r2, eventId: first },
          { recordId: r3, eventId: second },
        ].sort((x, y) => x.recordId.localeCompare(y.recordId)),
      );
      expect(
        await ask([
          { session: a, incarnation: 1, functionCallId: 'fc2', recordId: r1 }, // another call's record
          { session: a, incarnation: 2, functionCallId: 'fc1', recordId: r1 }, // another incarnation
          { session: b, incarnation: 1, functionCallId: 'fc1', recordId: r1 }, // another session
          { session: a, incarnation: 1, functionCallId: 'fc9', recordId: record('never') },
        ]),
      ).toEqual([]);
    });

    it('a deleted and recreated session: the old incarnation references nothing, the new one only its own events', async () => {
      const s = h.key('recreated');
      await h.client.request(LifecycleCreateSession, { session: s, creationOperationId: `op-${s.sessionId}-1` });
      const old = record('old');
      await append(s, 1, { author: 'agent', functionResponses: respond('fc1'), widgets: [descriptor('fc1', old)] });
      expect(await ask([{ session: s, incarnation: 1, functionCallId: 'fc1', recordId: old }])).toHaveLength(1);
      expect((await h.client.request(LifecycleDeleteSession, { session: s })).state).toBe('DELETED');
      // The cascade removed the events: the sealed store's GC may delete what its purge has not reached yet.
      expect(await ask([{ session: s, incarnation: 1, functionCallId: 'fc1', recordId: old }])).toEqual([]);

      await h.client.request(LifecycleCreateSession, {
        session: s,
        creationOperationId: `op-${s.sessionId}-2`,
        expectedPrior: { state: 'DELETED', incarnation: 1 },
      });
      const fresh = record('fresh');
      const eventId = await append(s, 2, { author: 'agent', functionResponses: respond('fc1'), widgets: [descriptor('fc1', fresh)] });
      expect(
        await ask([
          { session: s, incarnation: 2, functionCallId: 'fc1', recordId: fresh },
          { session: s, incarnation: 1, functionCallId: 'fc1', recordId: fresh },
        ]),
      ).toEqual([{ recordId: fresh, eventId }]);
    });

    it("serves the lookup from the GIN index over the events' references", async () => {
      // The test tables are tiny, so a sequential scan would win on cost: rule it out to see the index is usable.
      await h.sql(`SET enable_seqscan = off`);
      const plan = await h.sql<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT 1 FROM session_events WHERE session_event_sealed_refs(body) && ARRAY['x:y']`);
      await h.sql(`RESET enable_seqscan`);
      expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toContain('session_events_sealed_refs');
    });
  });
});
