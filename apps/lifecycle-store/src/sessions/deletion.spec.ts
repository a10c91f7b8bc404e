import {
  LifecycleAppendEvents,
  LifecycleCreateSession,
  LifecycleDeleteSession,
  LifecycleGetSession,
  LifecycleListEvents,
  type LedgerEventInput,
} from '@apphost/contracts';
import { describeOnPostgres, latch } from '@apphost/testing';
import type { LifecycleFaultPoint } from '../lifecycle.faults';
import { CascadeCallLog, LifecycleHarness, participantName, TestParticipant } from '../testing/lifecycle-harness';

const note = (text: string): LedgerEventInput => ({ author: 'agent', content: { parts: [{ text }] } });

describeOnPostgres('lifecycle-store deletion cascade', (target) => {
  describe('through the bus', () => {
    const names = [participantName('views'), participantName('sealed')];
    const participants: TestParticipant[] = [];
    const log = new CascadeCallLog();
    const h = new LifecycleHarness(target, { LIFECYCLE_CASCADE_PARTICIPANTS: names.join(','), LIFECYCLE_CASCADE_TIMEOUT_MS: '2000' });

    beforeAll(async () => {
      for (const name of names) participants.push(await TestParticipant.start(name, log));
      await h.start();
    }, 60_000);
    afterEach(() => h.faults.disarm());
    afterAll(async () => {
      await h.stop();
      for (const p of participants) await p.stop();
      await h.cleanup();
    });

    async function activeSession(label = 's') {
      const key = h.key(label);
      await h.client.request(LifecycleCreateSession, { session: key, creationOperationId: `op-${key.sessionId}`, importedEvents: [note('imported')] });
      await h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [note('turn')] });
      return key;
    }

    function expectFullyDeleted(key: ReturnType<typeof h.key>, incarnation: number) {
      return async () => {
        expect(await h.record(key)).toMatchObject({ state: 'DELETED', incarnation });
        expect(await h.sessionRows(key)).toEqual([]);
        expect(await h.eventRows(key)).toEqual([]);
        for (const p of participants) {
          expect(p.count('revoke', key.sessionId, incarnation)).toBeGreaterThanOrEqual(1);
          expect(p.count('purge', key.sessionId, incarnation)).toBeGreaterThanOrEqual(1);
        }
      };
    }

    it('deletes through DELETING(n): revoke on every participant, the session and its events, purge on every participant, then DELETED(n)', async () => {
      const key = await activeSession();
      const deleted = await h.client.request(LifecycleDeleteSession, { session: key });
      expect(deleted).toMatchObject({ state: 'DELETED', incarnation: 1, cascade: { sessionPurged: true } });
      expect(deleted.cascade!.participants.map((p) => [p.name, p.revoked, p.purged])).toEqual(names.map((n) => [n, true, true]));
      await expectFullyDeleted(key, 1)();
      // Revokes strictly precede purges: in the one log all participants share, every revoke (one per participant)
      // comes before every purge (one per participant).
      const calls = log.of(key.sessionId);
      const revokes = calls.filter((c) => c.operation === 'revoke');
      const purges = calls.filter((c) => c.operation === 'purge');
      expect(revokes.map((c) => c.participant).sort()).toEqual([...names].sort());
      expect(purges.map((c) => c.participant).sort()).toEqual([...names].sort());
      expect(calls.map((c) => c.operation)).toEqual([...names.map(() => 'revoke'), ...names.map(() => 'purge')]);
      expect(Math.max(...revokes.map((c) => c.seq))).toBeLessThan(Math.min(...purges.map((c) => c.seq)));
      await expect(h.client.request(LifecycleDeleteSession, { session: key })).resolves.toMatchObject({ state: 'DELETED', incarnation: 1 });
      await expect(h.client.request(LifecycleListEvents, { session: key })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    const phases: LifecycleFaultPoint[] = [
      'delete.after-deleting',
      'delete.before-revoke',
      'delete.after-revoke',
      'delete.before-session-purge',
      'delete.after-session-purge',
      'delete.before-purge',
      'delete.after-purge',
      'delete.before-deleted',
      'delete.after-deleted',
    ];
    it.each(phases)('crash at %s, then restart: the cascade resumes from the record and converges to DELETED(n)', async (point) => {
      const key = await activeSession();
      h.faults.arm(point);
      await expect(h.client.request(LifecycleDeleteSession, { session: key })).rejects.toMatchObject({ code: 'INTERNAL' });
      expect((await h.record(key))?.state).toMatch(point === 'delete.after-deleted' ? /^DELETED$/ : /^DELETING$/);
      await h.restart();
      await expectFullyDeleted(key, 1)();
      await expect(h.client.request(LifecycleDeleteSession, { session: key })).resolves.toMatchObject({ state: 'DELETED', incarnation: 1 });
    });

    it('a participant failure is recorded on the record and a metric (never as a session event); a retry of DELETE resumes', async () => {
      const key = await activeSession();
      participants[1].failNext('purge');
      await expect(h.client.request(LifecycleDeleteSession, { session: key })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        details: { state: 'DELETING', participant: names[1], operation: 'purge', pending: [`${names[1]}.purge`] },
      });
      const record = await h.record(key);
      expect(record).toMatchObject({ state: 'DELETING', incarnation: 1 });
      const failed = (record!.cascade as { participants: { name: string; lastError?: string; attempts: number }[] }).participants.find(
        (p) => p.name === names[1],
      );
      expect(failed).toMatchObject({ attempts: 2, lastError: expect.stringContaining('purge: UNAVAILABLE') });
      expect(await h.eventRows(key)).toEqual([]); // the session was purged already; nothing about deletion became an event
      const base = h.service.running.url!.replace('[::1]', '127.0.0.1');
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toMatch(new RegExp(`apphost_lifecycle_cascade_steps_total\\{participant="${names[1]}",step="purge",outcome="failed"[^}]*\\} 1`));
      await expect(h.client.request(LifecycleDeleteSession, { session: key })).resolves.toMatchObject({ state: 'DELETED', incarnation: 1 });
      await expectFullyDeleted(key, 1)();
    });

    it('DELETING(n) refuses new admissions: appends fail STALE_INCARNATION while the cascade runs', async () => {
      const key = await activeSession();
      const stall = participants[0].stallNext('revoke');
      const deleting = h.client.request(LifecycleDeleteSession, { session: key });
      await stall.reached;
      await expect(
        h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [note('late')] }),
      ).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        details: { reason: 'STALE_INCARNATION', state: 'DELETING' },
      });
      stall.release();
      await expect(deleting).resolves.toMatchObject({ state: 'DELETED' });
    });

    it('delete-then-recreate: incarnation n+1 starts empty and appends of the old incarnation fail', async () => {
      const key = await activeSession();
      await h.client.request(LifecycleDeleteSession, { session: key });
      const again = await h.client.request(LifecycleCreateSession, {
        session: key,
        creationOperationId: 'op-again',
        expectedPrior: { state: 'DELETED', incarnation: 1 },
      });
      expect(again).toMatchObject({ incarnation: 2, state: 'ACTIVE', cascade: null });
      await expect(
        h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [note('late')] }),
      ).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        details: { reason: 'STALE_INCARNATION', incarnation: 2 },
      });
      expect((await h.client.request(LifecycleListEvents, { session: key })).events).toEqual([]);
      await expect(
        h.client.request(LifecycleAppendEvents, { session: key, incarnation: 2, provenance: { path: 'user-turn' }, events: [note('new')] }),
      ).resolves.toEqual({
        incarnation: 2,
        eventIds: [1],
      });
      await expect(h.client.request(LifecycleListEvents, { session: key, incarnation: 1 })).rejects.toMatchObject({ details: { reason: 'STALE_INCARNATION' } });
    });

    it('create racing DELETING: refused with CONFLICT while the cascade runs, and nothing changes', async () => {
      const key = await activeSession();
      const stall = participants[1].stallNext('purge');
      const deleting = h.client.request(LifecycleDeleteSession, { session: key });
      await stall.reached;
      await expect(h.client.request(LifecycleCreateSession, { session: key, creationOperationId: 'op-racer' })).rejects.toMatchObject({
        code: 'CONFLICT',
        details: { reason: 'DELETION_IN_PROGRESS' },
      });
      await expect(
        h.client.request(LifecycleCreateSession, { session: key, creationOperationId: 'op-racer', expectedPrior: { state: 'DELETED', incarnation: 1 } }),
      ).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'UNEXPECTED_PRIOR_STATE' } });
      stall.release();
      await expect(deleting).resolves.toMatchObject({ state: 'DELETED', incarnation: 1 });
      expect(await h.record(key)).toMatchObject({ state: 'DELETED', incarnation: 1 });
    });

    it('create racing DELETED: concurrent re-creates as deletion completes yield exactly one incarnation n+1', async () => {
      const key = await activeSession();
      const hold = latch();
      h.faults.arm('delete.before-deleted', hold.action);
      const deleting = h.client.request(LifecycleDeleteSession, { session: key });
      await hold.reached;
      // Every racer is held where its create begins until all ten have arrived; then they and the deletion's last
      // step are let go together.
      const gate = latch();
      let arrivals = 0;
      let allArrived!: () => void;
      const arrived = new Promise<void>((resolve) => (allArrived = resolve));
      h.faults.arm(
        'create.before-reservation',
        () => {
          if (++arrivals === 10) allArrived();
          return gate.action();
        },
        10,
      );
      const racers = Array.from({ length: 10 }, (_, i) =>
        h.client.request(LifecycleCreateSession, { session: key, creationOperationId: `op-race-${i}` }).catch((e: { code: string }) => e),
      );
      await arrived;
      hold.release();
      gate.release();
      await expect(deleting).resolves.toMatchObject({ state: 'DELETED', incarnation: 1 });
      await Promise.all(racers);
      const late = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => h.client.request(LifecycleCreateSession, { session: key, creationOperationId: `op-late-${i}` })),
      );
      const winners = [...(await Promise.all(racers)), ...late.map((r) => (r.status === 'fulfilled' ? r.value : r.reason))].filter((r) => 'state' in r);
      expect(winners).toHaveLength(1);
      expect(winners[0]).toMatchObject({ incarnation: 2, state: 'ACTIVE' });
      expect(await h.record(key)).toMatchObject({ state: 'ACTIVE', incarnation: 2 });
    });

    it('recreate racing deletion completion: a delete retried concurrently with the cascade and a create converge', async () => {
      const key = await activeSession();
      const stall = participants[0].stallNext('purge');
      const first = h.client.request(LifecycleDeleteSession, { session: key });
      await stall.reached;
      const second = h.client.request(LifecycleDeleteSession, { session: key }); // a retry racing the first driver
      stall.release();
      const results = await Promise.allSettled([first, second]);
      expect(results.some((r) => r.status === 'fulfilled' && r.value.state === 'DELETED')).toBe(true);
      await expect(h.client.request(LifecycleDeleteSession, { session: key })).resolves.toMatchObject({ state: 'DELETED', incarnation: 1 });
      await expect(h.client.request(LifecycleCreateSession, { session: key, creationOperationId: 'op-next' })).resolves.toMatchObject({
        incarnation: 2,
        state: 'ACTIVE',
      });
      await expect(h.client.request(LifecycleGetSession, { session: key })).resolves.toMatchObject({
        incarnation: 2,
        state: 'ACTIVE',
        version: 7 + names.length * 2,
      });
    });

    it('a CREATING session cannot be deleted, and an unknown one is NOT_FOUND', async () => {
      const key = h.key();
      h.faults.arm('create.after-reservation');
      await expect(h.client.request(LifecycleCreateSession, { session: key, creationOperationId: 'op-x' })).rejects.toMatchObject({ code: 'INTERNAL' });
      await expect(h.client.request(LifecycleDeleteSession, { session: key })).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        details: { reason: 'SESSION_CREATING' },
      });
      await expect(h.client.request(LifecycleDeleteSession, { session: h.key() })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });
  });
});
