import {
  LifecycleCreateSession,
  LifecycleAppendEvents,
  LifecycleDeleteSession,
  LifecycleGetSession,
  LifecycleListEvents,
  type LedgerEventInput,
} from '@apphost/contracts';
import { describeOnPostgres, expectAppError, latch } from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';

const imports: LedgerEventInput[] = [
  { author: 'user', content: { role: 'user', parts: [{ text: 'hello' }] } },
  { author: 'agent', content: { role: 'model', parts: [{ text: 'hi' }] }, audience: 'app_audit', emitter: 'forged', invocationOrigin: 'user' },
];
const note = (text: string): LedgerEventInput => ({ author: 'agent', content: { parts: [{ text }] } });

describeOnPostgres('lifecycle-store fenced creation', (target) => {
  // Nested, so these hooks run before the target's own afterAll stops an embedded server.
  describe('through the bus', () => {
    const h = new LifecycleHarness(target, { LIFECYCLE_CREATING_LEASE_MS: '60000' });

    beforeAll(() => h.start(), 60_000);
    afterEach(() => h.faults.disarm());
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    const create = (
      session: ReturnType<typeof h.key>,
      creationOperationId: string,
      extra: Partial<{ importedEvents: LedgerEventInput[]; reclaim: boolean }> = {},
    ) => h.client.request(LifecycleCreateSession, { session, creationOperationId, ...extra });

    it('creates ACTIVE(1), and the same creationOperationId retried returns the same session', async () => {
      const key = h.key();
      const first = await create(key, 'op-1', { importedEvents: imports });
      expect(first).toMatchObject({ session: key, incarnation: 1, state: 'ACTIVE', adopted: false, cascade: null });
      const again = await create(key, 'op-1', { importedEvents: imports });
      expect(again).toEqual(first);
      await expect(create(key, 'op-2')).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'ALREADY_EXISTS' } });
      await expect(create(key, 'op-1', { importedEvents: [note('other')] })).resolves.toMatchObject({ incarnation: 1 });
      expect(await h.sessionRows(key)).toEqual([{ incarnation: 1, creation_operation_id: 'op-1', import_count: 2 }]);
    });

    it('crash before the lifecycle reservation: nothing is reserved, and the retry creates ACTIVE(1)', async () => {
      const key = h.key();
      h.faults.arm('create.before-reservation');
      await expect(create(key, 'op-a')).rejects.toMatchObject({ code: 'INTERNAL' });
      await h.restart();
      expect(await h.record(key)).toBeUndefined();
      await expect(create(key, 'op-a')).resolves.toMatchObject({ incarnation: 1, state: 'ACTIVE' });
    });

    it('crash after the lifecycle reservation: CREATING(1) denies app operations; the retry completes incarnation 1', async () => {
      const key = h.key();
      h.faults.arm('create.after-reservation');
      await expect(create(key, 'op-a', { importedEvents: imports })).rejects.toMatchObject({ code: 'INTERNAL' });
      await h.restart();
      expect(await h.record(key)).toMatchObject({ state: 'CREATING', incarnation: 1, creation_operation_id: 'op-a' });
      expect(await h.sessionRows(key)).toEqual([]);
      await expect(h.client.request(LifecycleGetSession, { session: key })).resolves.toMatchObject({ state: 'CREATING', incarnation: 1 });
      await expect(
        h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [note('early')] }),
      ).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        details: { reason: 'SESSION_CREATING' },
      });
      await expect(h.client.request(LifecycleListEvents, { session: key })).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        details: { reason: 'SESSION_CREATING' },
      });
      // Transient: retryable, with what is left of the creator's lease as the hint.
      const inProgress = await expectAppError(create(key, 'op-b'), 'CONFLICT', 'CREATE_IN_PROGRESS');
      expect(inProgress.retryable).toBe(true);
      expect(inProgress.details?.['retryAfterMs']).toBeGreaterThan(0);
      expect(inProgress.details?.['retryAfterMs']).toBeLessThanOrEqual(60_000);
      await expect(create(key, 'op-a', { importedEvents: imports })).resolves.toMatchObject({ incarnation: 1, state: 'ACTIVE' });
      expect((await h.eventRows(key)).map((e) => e.event_id)).toEqual([1, 2]);
    });

    it.each(['create.before-import-finalization', 'create.after-import-finalization', 'create.before-session-commit'] as const)(
      'crash at %s: nothing of the session is written; the retry completes the same incarnation',
      async (point) => {
        const key = h.key();
        h.faults.arm(point);
        await expect(create(key, 'op-a', { importedEvents: imports })).rejects.toMatchObject({ code: 'INTERNAL' });
        await h.restart();
        expect(await h.record(key)).toMatchObject({ state: 'CREATING', incarnation: 1 });
        expect(await h.sessionRows(key)).toEqual([]);
        expect(await h.eventRows(key)).toEqual([]);
        await expect(create(key, 'op-a', { importedEvents: imports })).resolves.toMatchObject({ incarnation: 1, state: 'ACTIVE' });
        const listed = await h.client.request(LifecycleListEvents, { session: key });
        expect(listed.events.map((e) => [e.id, e.author, e.emitter, e.invocationOrigin, e.audience])).toEqual([
          [1, 'user', 'session-api', 'system', null],
          [2, 'agent', 'session-api', 'system', null],
        ]);
      },
    );

    it('crash after the session commit, before ACTIVE: recovery at restart verifies the receipt and activates; the retry changes nothing', async () => {
      const key = h.key();
      h.faults.arm('create.after-session-commit');
      await expect(create(key, 'op-a', { importedEvents: imports })).rejects.toMatchObject({ code: 'INTERNAL' });
      expect(await h.record(key)).toMatchObject({ state: 'CREATING', incarnation: 1 });
      expect(await h.sessionRows(key)).toEqual([{ incarnation: 1, creation_operation_id: 'op-a', import_count: 2 }]);
      await h.restart();
      expect(await h.record(key)).toMatchObject({ state: 'ACTIVE', incarnation: 1, creation_operation_id: 'op-a' });
      await expect(create(key, 'op-a', { importedEvents: imports })).resolves.toMatchObject({ incarnation: 1, state: 'ACTIVE' });
      expect(await h.eventRows(key)).toHaveLength(2);
    });

    it('crash after the session commit, then the same operation retried without a restart: completes idempotently', async () => {
      const key = h.key();
      h.faults.arm('create.after-session-commit');
      await expect(create(key, 'op-a', { importedEvents: imports })).rejects.toMatchObject({ code: 'INTERNAL' });
      await expect(create(key, 'op-a', { importedEvents: [note('different')] })).rejects.toMatchObject({
        code: 'CONFLICT',
        details: { reason: 'CREATION_OPERATION_REUSED' },
      });
      await expect(create(key, 'op-a', { importedEvents: imports })).resolves.toMatchObject({ incarnation: 1, state: 'ACTIVE' });
    });

    it('recovery compares the import digest, not the count: a tampered import is never activated', async () => {
      const key = h.key();
      h.faults.arm('create.after-session-commit');
      await expect(create(key, 'op-a', { importedEvents: imports })).rejects.toMatchObject({ code: 'INTERNAL' });
      // Same number of rows, different content: as if a row had been swapped underneath the receipt.
      await h.sql(
        `WITH gone AS (DELETE FROM session_events WHERE session_id = $1 AND event_id = 2 RETURNING *)
         INSERT INTO session_events SELECT tenant, app_name, user_id, session_id, incarnation, event_id, imported, author, audience, invocation_origin, emitter, immediate_caller,
                jsonb_set(body, '{content}', '{"parts":[{"text":"swapped"}]}'), created_at FROM gone`,
        [key.sessionId],
      );
      await h.restart();
      expect(await h.record(key)).toMatchObject({ state: 'CREATING', incarnation: 1 });
    });

    it('20 concurrent creates of one id with different operation ids: exactly one incarnation', async () => {
      const key = h.key();
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => create(key, `op-${i}`)));
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const r of results.filter((x) => x.status === 'rejected')) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'CONFLICT' });
      expect(await h.record(key)).toMatchObject({ state: 'ACTIVE', incarnation: 1, version: 2 });
      expect(await h.sessionRows(key)).toHaveLength(1);
    });

    it('20 concurrent retries of one creationOperationId converge on one session', async () => {
      const key = h.key();
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => create(key, 'op-same', { importedEvents: imports })));
      const views = results.filter((r): r is PromiseFulfilledResult<Awaited<ReturnType<typeof create>>> => r.status === 'fulfilled').map((r) => r.value);
      expect(views.length).toBeGreaterThanOrEqual(1);
      for (const v of views) expect(v).toMatchObject({ incarnation: 1 });
      // Retries that overlapped an in-flight attempt may see the operation mid-way; a later retry always converges.
      await expect(create(key, 'op-same', { importedEvents: imports })).resolves.toMatchObject({ incarnation: 1, state: 'ACTIVE' });
      expect(await h.eventRows(key)).toHaveLength(2);
    });

    it('abandoned CREATING recovery: after the lease lapses another creator reclaims it as a new incarnation', async () => {
      const key = h.key();
      h.faults.arm('create.after-reservation');
      await expect(create(key, 'op-a')).rejects.toMatchObject({ code: 'INTERNAL' });
      // Inside the lease another creator is refused …
      await h.ageReservation(key, 59_000);
      await expect(create(key, 'op-b', { importedEvents: imports })).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'CREATE_IN_PROGRESS' } });
      // … and once it has lapsed (60 s), it reclaims.
      await h.ageReservation(key, 1_000);
      await expect(create(key, 'op-b', { importedEvents: imports })).resolves.toMatchObject({ incarnation: 2, state: 'ACTIVE' });
      // The abandoned creator's retry cannot resurrect its reservation.
      await expect(create(key, 'op-a')).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'ALREADY_EXISTS' } });
      expect(await h.sessionRows(key)).toEqual([{ incarnation: 2, creation_operation_id: 'op-b', import_count: 2 }]);
    });

    it('abandoned CREATING whose creator had committed: a reclaim completes that creation instead (idempotent recovery)', async () => {
      const key = h.key();
      h.faults.arm('create.after-session-commit');
      await expect(create(key, 'op-a', { importedEvents: imports })).rejects.toMatchObject({ code: 'INTERNAL' });
      await expect(create(key, 'op-b', { reclaim: true })).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'ALREADY_EXISTS' } });
      expect(await h.record(key)).toMatchObject({ state: 'ACTIVE', incarnation: 1, creation_operation_id: 'op-a' });
      await expect(create(key, 'op-a', { importedEvents: imports })).resolves.toMatchObject({ incarnation: 1, state: 'ACTIVE' });
    });

    it('A stalls, reclaim retires A, B reserves and commits, then A commits: A fails inside its own transaction', async () => {
      const key = h.key();
      const a = latch();
      h.faults.arm('create.before-session-commit', a.action);
      const pendingA = create(key, 'op-a', { importedEvents: [note('from A')] });
      await a.reached;
      await expect(create(key, 'op-b', { reclaim: true, importedEvents: [note('from B')] })).resolves.toMatchObject({ incarnation: 2, state: 'ACTIVE' });
      a.release();
      await expect(pendingA).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'FENCE_RETIRED' } });
      expect(await h.sessionRows(key)).toEqual([{ incarnation: 2, creation_operation_id: 'op-b', import_count: 1 }]);
      const listed = await h.client.request(LifecycleListEvents, { session: key });
      expect(listed.events.map((e) => e.content)).toEqual([{ parts: [{ text: 'from B' }] }]);
      expect(await h.eventRows(key)).toHaveLength(1);
    });

    it('reverse commit order: A stalls, B reclaims and stalls, A commits first (fails in its transaction), then B commits', async () => {
      const key = h.key();
      const a = latch();
      const b = latch();
      let hits = 0;
      h.faults.arm('create.before-session-commit', () => (hits++ === 0 ? a.action() : b.action()), 2);
      const pendingA = create(key, 'op-a', { importedEvents: [note('from A')] });
      await a.reached;
      const pendingB = create(key, 'op-b', { reclaim: true, importedEvents: [note('from B')] });
      await b.reached;
      a.release();
      await expect(pendingA).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'FENCE_RETIRED' } });
      expect(await h.sessionRows(key)).toEqual([]);
      b.release();
      await expect(pendingB).resolves.toMatchObject({ incarnation: 2, state: 'ACTIVE' });
      expect(await h.sessionRows(key)).toEqual([{ incarnation: 2, creation_operation_id: 'op-b', import_count: 1 }]);
    });

    it('A holds its fenced transaction open while B reclaims: the reclaim waits on the fence row, sees the receipt, and A stands', async () => {
      const key = h.key();
      const a = latch();
      h.faults.arm('create.inside-session-commit', a.action);
      const pendingA = create(key, 'op-a');
      await a.reached;
      let settled = false;
      const pendingB = create(key, 'op-b', { reclaim: true }).finally(() => (settled = true));
      await h.blockedOnLock(); // B's reclaim waits on the fence row A holds
      expect(settled).toBe(false);
      a.release();
      await expect(pendingA).resolves.toMatchObject({ incarnation: 1, state: 'ACTIVE' });
      await expect(pendingB).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'ALREADY_EXISTS' } });
      expect(await h.record(key)).toMatchObject({ state: 'ACTIVE', incarnation: 1, creation_operation_id: 'op-a' });
    });

    it('imported-event rows partially committed under a retired receipt are never served and are purged with the session', async () => {
      const key = h.key();
      h.faults.arm('create.after-reservation');
      await expect(create(key, 'op-a')).rejects.toMatchObject({ code: 'INTERNAL' });
      // A backend without the transactional fence could leave A's imports behind without A's session row.
      await h.sql(
        `INSERT INTO session_events (tenant, app_name, user_id, session_id, incarnation, event_id, imported, author, audience, invocation_origin, emitter, immediate_caller, body)
         VALUES ($1, $2, $3, $4, 1, 1, true, 'ghost', NULL, 'system', 'session-api', NULL, '{"author":"ghost","content":{"parts":[{"text":"retired"}]}}')`,
        [key.tenant, key.appName, key.userId, key.sessionId],
      );
      await expect(create(key, 'op-b', { reclaim: true, importedEvents: [note('from B')] })).resolves.toMatchObject({ incarnation: 2 });
      const listed = await h.client.request(LifecycleListEvents, { session: key });
      expect(listed.events.map((e) => e.author)).toEqual(['agent']);
      await expect(
        h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [note('late')] }),
      ).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        details: { reason: 'STALE_INCARNATION' },
      });
      await expect(h.client.request(LifecycleDeleteSession, { session: key })).resolves.toMatchObject({ state: 'DELETED', incarnation: 2 });
      expect(await h.eventRows(key)).toEqual([]); // the retired creator's orphans went with the session
    });

    it('a creation whose imports fail cross-validation is refused before anything is reserved', async () => {
      const key = h.key();
      const bad: LedgerEventInput = {
        author: 'agent',
        functionCalls: [
          { id: 'c1', name: 't' },
          { id: 'c1', name: 't' },
        ],
      };
      await expect(create(key, 'op-a', { importedEvents: [bad] })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { reason: 'DUPLICATE_FUNCTION_CALL_ID' },
      });
      expect(await h.record(key)).toBeUndefined();
    });

    it('migration: a legacy session row is adopted lazily as ACTIVE(1) with an adoption marker, never as a creation', async () => {
      const key = await h.legacySession();
      const views = await Promise.all(Array.from({ length: 8 }, () => h.client.request(LifecycleGetSession, { session: key })));
      for (const v of views) expect(v).toMatchObject({ incarnation: 1, state: 'ACTIVE', adopted: true, version: 1 });
      const record = await h.record(key);
      expect(record).toMatchObject({ state: 'ACTIVE', incarnation: 1, adopted: true, creation_operation_id: null, adoption: { receipt: 'adoption' } });
      expect(await h.sessionRows(key)).toEqual([{ incarnation: 1, creation_operation_id: null, import_count: 0 }]);
      await expect(create(key, 'op-new')).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'ALREADY_EXISTS' } });
      await expect(
        h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [note('after adoption')] }),
      ).resolves.toEqual({
        incarnation: 1,
        eventIds: [1],
      });
    });

    it('migration: an append is the first touch of a legacy row — it adopts, then appends', async () => {
      const key = await h.legacySession();
      await expect(
        h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'session-api' }, events: [note('patch')] }),
      ).resolves.toEqual({
        incarnation: 1,
        eventIds: [1],
      });
      expect(await h.record(key)).toMatchObject({ adopted: true, state: 'ACTIVE', incarnation: 1 });
    });

    it('migration: a create or a delete as the first touch of a legacy row adopts it (the read-free first attempts write nothing over it)', async () => {
      const legacy = () => h.legacySession();
      const created = await legacy();
      await expect(create(created, 'op-new')).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'ALREADY_EXISTS' } });
      expect(await h.record(created)).toMatchObject({ state: 'ACTIVE', incarnation: 1, adopted: true, creation_operation_id: null, version: 1 });
      const deleted = await legacy();
      await expect(h.client.request(LifecycleDeleteSession, { session: deleted, expectedIncarnation: 2 })).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        details: { reason: 'STALE_INCARNATION', incarnation: 1 },
      });
      expect(await h.record(deleted)).toMatchObject({ state: 'ACTIVE', incarnation: 1, adopted: true });
      await expect(h.client.request(LifecycleDeleteSession, { session: deleted, expectedIncarnation: 1 })).resolves.toMatchObject({
        state: 'DELETED',
        incarnation: 1,
      });
      expect(await h.sessionRows(deleted)).toEqual([]);
    });

    it('the database itself refuses illegal transitions, record deletion and event rewrites', async () => {
      const key = h.key();
      await create(key, 'op-a', { importedEvents: [note('x')] });
      const where = `tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`;
      const params = [key.tenant, key.appName, key.userId, key.sessionId];
      await expect(h.sql(`UPDATE lifecycle_records SET state = 'CREATING', version = version + 1 WHERE ${where}`, params)).rejects.toThrow(
        /illegal transition/,
      );
      await expect(h.sql(`UPDATE lifecycle_records SET state = 'DELETED', version = version + 1 WHERE ${where}`, params)).rejects.toThrow(/illegal transition/);
      await expect(h.sql(`UPDATE lifecycle_records SET state = 'DELETING', version = version WHERE ${where}`, params)).rejects.toThrow(/version must advance/);
      await expect(h.sql(`DELETE FROM lifecycle_records WHERE ${where}`, params)).rejects.toThrow(/not allowed/);
      await expect(h.sql(`UPDATE session_events SET author = 'mallory' WHERE ${where}`, params)).rejects.toThrow(/not allowed/);
      expect(await h.record(key)).toMatchObject({ state: 'ACTIVE', incarnation: 1, version: 2 });
    });
  });
});
