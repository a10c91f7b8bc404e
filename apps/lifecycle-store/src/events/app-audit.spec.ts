import {
  APP_AUDIT_METADATA_KEY,
  LifecycleAppendEvents,
  LifecycleCompactAppAudit,
  LifecycleCreateSession,
  LifecycleDeleteSession,
  LifecycleListEvents,
  type AppAuditRecord,
  type AppendProvenance,
  type LedgerEventInput,
  type PublicEvent,
  type SessionKey,
} from '@apphost/contracts';
import { describeOnPostgres, expectAppError } from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';

const VIEW_A = `vw-${'a'.repeat(32)}`;
const VIEW_B = `vw-${'b'.repeat(32)}`;
const RECORD_ID = 'rec_SEALEDSEALEDSEALED00';

type Operation = Extract<AppAuditRecord, { kind: 'operation' }>;
let clock = Date.parse('2026-01-01T00:00:00.000Z');

function operation(viewId: string, overrides: Partial<Operation> = {}): Operation {
  return {
    kind: 'operation',
    viewId,
    widgetId: '3:fc-1',
    method: 'tools/call',
    tool: 'poll-system-stats',
    uri: null,
    decision: 'executed',
    outcome: 'ok',
    reason: null,
    functionCallId: null,
    replayed: false,
    durationMs: 3,
    at: new Date((clock += 1_000)).toISOString(),
    ...overrides,
  };
}

const auditEvent = (record: AppAuditRecord, extra: Partial<LedgerEventInput> = {}): LedgerEventInput => ({
  author: 'apphost-view',
  customMetadata: { [APP_AUDIT_METADATA_KEY]: record },
  ...extra,
});
const recordOf = (e: PublicEvent) => e.customMetadata?.[APP_AUDIT_METADATA_KEY] as AppAuditRecord | undefined;

/** App audit events in the ledger: the model-facing read leaves them out, and compaction bounds them per View. */
describeOnPostgres('lifecycle-store app audit events', (target) => {
  describe('through the bus', () => {
    const h = new LifecycleHarness(target);

    beforeAll(() => h.start(), 60_000);
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    async function active(): Promise<SessionKey> {
      const key = h.key('audit');
      await h.client.request(LifecycleCreateSession, { session: key, creationOperationId: `op-${key.sessionId}` });
      return key;
    }
    const append = async (key: SessionKey, events: LedgerEventInput[], provenance: AppendProvenance = { path: 'app-operation' }) =>
      (await h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance, events })).eventIds;
    const list = (key: SessionKey, req: { afterId?: number; limit?: number; audience?: 'model' | 'all' } = {}) =>
      h.client.request(LifecycleListEvents, { session: key, limit: 500, ...req });
    const compact = (key: SessionKey, viewId: string, keepLast: number, olderThan?: string) =>
      h.client.request(LifecycleCompactAppAudit, { session: key, incarnation: 1, viewId, keepLast, ...(olderThan ? { olderThan } : {}) });
    const operationsOf = async (key: SessionKey, viewId: string) =>
      (await list(key)).events.filter((e) => recordOf(e)?.kind === 'operation' && recordOf(e)?.viewId === viewId);

    it("an app operation is stamped app_audit / mcp_app / host / app whatever the caller sent; audience 'model' leaves it out", async () => {
      const key = await active();
      await append(key, [{ author: 'user', content: { parts: [{ text: 'hi' }] } }], { path: 'user-turn' });
      const forged = auditEvent(operation(VIEW_A), { audience: null, invocationOrigin: 'user', emitter: 'runner', immediateCaller: 'model' });
      const [auditId] = await append(key, [forged]);
      await append(key, [{ author: 'agent', content: { parts: [{ text: 'there' }] } }], { path: 'user-turn' });

      const all = await list(key, { audience: 'all' });
      expect(all.events.find((e) => e.id === auditId)).toMatchObject({
        audience: 'app_audit',
        invocationOrigin: 'mcp_app',
        emitter: 'host',
        immediateCaller: 'app',
      });
      expect((await list(key)).events).toEqual(all.events); // absent = all
      const model = await list(key, { audience: 'model' });
      expect(model.events.map((e) => e.id)).toEqual([1, 3]);
      expect(model.events.every((e) => e.audience === null)).toBe(true);
    });

    it("paging with audience 'model' skips app audit events and still reaches every later model event", async () => {
      const key = await active();
      const modelIds: number[] = [];
      for (let turn = 0; turn < 4; turn++) {
        modelIds.push(...(await append(key, [{ author: 'agent', content: { parts: [{ text: `turn ${turn}` }] } }], { path: 'user-turn' })));
        // A polling View between turns, and a bootstrap render (app_audit as well).
        await append(
          key,
          Array.from({ length: 7 }, () => auditEvent(operation(VIEW_A))),
        );
        await append(key, [{ author: 'apphost-view' }], { path: 'bootstrap-render' });
      }
      const seen: number[] = [];
      let afterId: number | undefined;
      let pages = 0;
      for (;;) {
        const page = await list(key, { audience: 'model', limit: 1, ...(afterId !== undefined ? { afterId } : {}) });
        seen.push(...page.events.map((e) => e.id));
        pages++;
        if (page.nextAfterId === null) break;
        expect(page.nextAfterId).toBe(page.events.at(-1)!.id);
        afterId = page.nextAfterId;
      }
      expect(seen).toEqual(modelIds);
      expect(pages).toBeLessThanOrEqual(modelIds.length + 1);
      // A page ending before trailing audit events: the next one is empty and says so.
      const last = await list(key, { audience: 'model', afterId: modelIds.at(-1) });
      expect(last).toMatchObject({ events: [], nextAfterId: null });
    });

    it('compaction keeps the newest keepLast, folds the rest into one summary with exact counts, cumulative over two compactions', async () => {
      const key = await active();
      const [modelId] = await append(key, [{ author: 'agent', content: { parts: [{ text: 'before' }] } }], { path: 'user-turn' });
      const first = [
        ...Array.from({ length: 6 }, () => operation(VIEW_A)),
        operation(VIEW_A, { decision: 'denied', outcome: 'PERMISSION_DENIED', reason: 'TOOL_NOT_APP_VISIBLE', tool: 'model-only' }),
        operation(VIEW_A, { outcome: 'cancelled' }),
      ];
      await append(
        key,
        first.map((r) => auditEvent(r)),
      );
      const [otherView] = await append(key, [auditEvent(operation(VIEW_B))]);
      const [render] = await append(key, [{ author: 'apphost-view' }], { path: 'bootstrap-render' });

      const once = await compact(key, VIEW_A, 3);
      expect(once).toMatchObject({ incarnation: 1, compacted: 5, remaining: 3, retainedSealed: 0 });
      expect(once.summary!.record).toEqual({
        kind: 'summary',
        viewId: VIEW_A,
        count: 5,
        byDecision: { executed: 5 },
        byOutcome: { ok: 5 },
        firstAt: first[0].at,
        lastAt: first[4].at,
      });
      expect((await operationsOf(key, VIEW_A)).map((e) => recordOf(e))).toEqual(first.slice(5));
      expect(once.oldestRemainingAt).toBe((await operationsOf(key, VIEW_A))[0].timestamp);

      const second = [operation(VIEW_A, { decision: 'denied', outcome: 'RESOURCE_EXHAUSTED', reason: 'RPC_RATE_LIMITED' }), operation(VIEW_A)];
      await append(
        key,
        second.map((r) => auditEvent(r)),
      );
      const twice = await compact(key, VIEW_A, 1);
      expect(twice).toMatchObject({ compacted: 4, remaining: 1 });
      expect(twice.summary!.record).toEqual({
        kind: 'summary',
        viewId: VIEW_A,
        count: 9,
        byDecision: { executed: 7, denied: 2 },
        byOutcome: { ok: 6, PERMISSION_DENIED: 1, cancelled: 1, RESOURCE_EXHAUSTED: 1 },
        firstAt: first[0].at,
        lastAt: second[0].at,
      });
      expect(twice.summary!.eventId).toBeGreaterThan(once.summary!.eventId);

      const all = (await list(key)).events;
      // One summary of the View (the newest), the newest operation record, and every other event untouched.
      const summaries = all.filter((e) => recordOf(e)?.kind === 'summary');
      expect(summaries.map((e) => e.id)).toEqual([twice.summary!.eventId]);
      expect(summaries[0]).toMatchObject({
        audience: 'app_audit',
        invocationOrigin: 'mcp_app',
        emitter: 'system',
        immediateCaller: null,
        author: 'apphost-view',
      });
      expect((await operationsOf(key, VIEW_A)).map((e) => recordOf(e))).toEqual([second[1]]);
      expect(all.map((e) => e.id)).toEqual(expect.arrayContaining([modelId, otherView, render]));
      expect(all).toHaveLength(5);
      // Model-facing reads never see the summary either.
      expect((await list(key, { audience: 'model' })).events.map((e) => e.id)).toEqual([modelId]);
    });

    it('is idempotent: a repeated compaction writes nothing and answers the same summary', async () => {
      const key = await active();
      await append(
        key,
        Array.from({ length: 4 }, () => auditEvent(operation(VIEW_A))),
      );
      const first = await compact(key, VIEW_A, 2);
      const rows = await h.eventRows(key);
      const again = await compact(key, VIEW_A, 2);
      expect(again).toEqual({ ...first, compacted: 0 });
      expect(await h.eventRows(key)).toEqual(rows);
      // Nothing ever compacted: no summary, nothing written.
      const fresh = await active();
      await append(fresh, [auditEvent(operation(VIEW_A))]);
      expect(await compact(fresh, VIEW_A, 5)).toMatchObject({ compacted: 0, remaining: 1, summary: null });
      expect(await h.eventRows(fresh)).toHaveLength(1);
    });

    it('olderThan folds records appended before it even within keepLast (the database clock decides)', async () => {
      const key = await active();
      const old = [operation(VIEW_A), operation(VIEW_A)];
      await append(
        key,
        old.map((r) => auditEvent(r)),
      );
      const [{ now }] = await h.sql<{ now: Date }>(`SELECT clock_timestamp() AS now`);
      const recent = [operation(VIEW_A)];
      await append(
        key,
        recent.map((r) => auditEvent(r)),
      );
      const out = await compact(key, VIEW_A, 100, now.toISOString());
      expect(out).toMatchObject({ compacted: 2, remaining: 1 });
      expect(out.summary!.record).toMatchObject({ count: 2, firstAt: old[0].at, lastAt: old[1].at });
      expect((await operationsOf(key, VIEW_A)).map((e) => recordOf(e))).toEqual(recent);
    });

    it('keeps records that carry sealed references (the sealed store never collects a committed record) and counts them apart', async () => {
      const key = await active();
      const sealed = operation(VIEW_A, { functionCallId: 'va-0001', tool: 'show-chart' });
      await append(key, [
        auditEvent(sealed, {
          functionResponses: [{ id: 'va-0001', name: 'show-chart' }],
          sealedResultRefs: { 'va-0001': { recordId: RECORD_ID, schemaVersion: 1 } },
        }),
        ...Array.from({ length: 3 }, () => auditEvent(operation(VIEW_A))),
      ]);
      const out = await compact(key, VIEW_A, 0);
      expect(out).toMatchObject({ compacted: 3, remaining: 0, oldestRemainingAt: null, retainedSealed: 1 });
      const left = await operationsOf(key, VIEW_A);
      expect(left.map((e) => recordOf(e))).toEqual([sealed]);
      expect(left[0].sealedResultRefs).toEqual({ 'va-0001': { recordId: RECORD_ID, schemaVersion: 1 } });
    });

    it('compactions racing appends of the same View lose nothing: summary count + records left = records appended', async () => {
      const key = await active();
      const work: Promise<unknown>[] = [];
      for (let i = 0; i < 12; i++) {
        work.push(append(key, [auditEvent(operation(VIEW_A)), auditEvent(operation(VIEW_A))]));
        if (i % 4 === 0) work.push(compact(key, VIEW_A, 3));
      }
      await Promise.all(work);
      const last = await compact(key, VIEW_A, 3);
      expect(last.remaining).toBe(3);
      expect(last.summary!.record).toMatchObject({ count: 21 });
      expect(await operationsOf(key, VIEW_A)).toHaveLength(3);
      expect((await list(key)).events.filter((e) => recordOf(e)?.kind === 'summary')).toHaveLength(1);
    });

    it('only the current ACTIVE(n): another incarnation is STALE_INCARNATION, an unknown or deleted session NOT_FOUND; malformed input INVALID_ARGUMENT', async () => {
      const key = await active();
      await expectAppError(
        h.client.request(LifecycleCompactAppAudit, { session: key, incarnation: 2, viewId: VIEW_A, keepLast: 1 }),
        'FAILED_PRECONDITION',
        'STALE_INCARNATION',
      );
      await expectAppError(compact(h.key('nobody'), VIEW_A, 1), 'NOT_FOUND');
      await expectAppError(h.client.request(LifecycleCompactAppAudit, { session: key, incarnation: 1, viewId: 'not-a-view', keepLast: 1 }), 'INVALID_ARGUMENT');
      await expectAppError(h.client.request(LifecycleCompactAppAudit, { session: key, incarnation: 1, viewId: VIEW_A, keepLast: -1 }), 'INVALID_ARGUMENT');
      await h.client.request(LifecycleDeleteSession, { session: key });
      await expectAppError(compact(key, VIEW_A, 1), 'NOT_FOUND');
    });

    it('the deletion cascade removes app audit events and summaries with the session (they are session events)', async () => {
      const key = await active();
      await append(key, [{ author: 'agent' }], { path: 'user-turn' });
      await append(
        key,
        Array.from({ length: 3 }, () => auditEvent(operation(VIEW_A))),
      );
      await compact(key, VIEW_A, 1);
      expect((await h.eventRows(key)).filter((r) => r.audience === 'app_audit')).toHaveLength(2);
      expect((await h.client.request(LifecycleDeleteSession, { session: key })).state).toBe('DELETED');
      expect(await h.eventRows(key)).toEqual([]);
    });

    it("finds a View's records through the partial index by View", async () => {
      await h.sql(`SET enable_seqscan = off`);
      const plan = await h.sql<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT event_id FROM session_events
          WHERE tenant = 'a' AND app_name = 'b' AND user_id = 'c' AND session_id = 'd' AND incarnation = 1 AND audience = 'app_audit'
            AND (body->'customMetadata'->'io.apphost/app-audit'->>'viewId') = 'vw-x' ORDER BY event_id DESC`,
      );
      await h.sql(`RESET enable_seqscan`);
      expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toContain('session_events_app_audit_by_view');
    });
  });
});
