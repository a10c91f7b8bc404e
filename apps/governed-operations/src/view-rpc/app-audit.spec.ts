import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { createCoordinationStore, type CoordinationStore } from '@apphost/coordination';
import {
  APP_AUDIT_METADATA_KEY,
  LifecycleAppendEvents,
  LifecycleCreateSession,
  LifecycleDeleteSession,
  LifecycleListEvents,
  SealedGc,
  viewPolicyOf,
  type AppAuditRecord,
  type BoundToolHandle,
  type PublicEvent,
  type SessionKey,
} from '@apphost/contracts';
import { SealedResultClient } from '@apphost/sealed-results';
import { captureServiceLogs, eventually, expectAppError, sleep, TEST_DATABASE_URL, TEST_REDIS_URL, testLogger } from '@apphost/testing';
import { testProfile } from '../test/fake-plane';
import { startStoreProcesses, type StoreProcesses } from '../test/store-processes';
import type { ViewRecord } from '../views/view-records';
import { AppAudit } from './app-audit';
import { auditCountKeyOf, keepLastOf, KNOWN_BASE } from './audit-retention';
import type { AuditEntry, ViewContext } from './ports';

/**
 * The app audit trail against the real lifecycle-store and sealed-result-store (each its own process, on the real
 * NATS and PostgreSQL) and the real Redis: the events it leaves, the sealed results they reference, and the
 * per-View retention that keeps a polling View's ledger bounded.
 */
jest.setTimeout(60_000);

const SECRET = 'only-the-view-sees-this';
const ARGUMENT = 'argument-value-never-audited';
const CHART: BoundToolHandle = {
  handleId: `th_${'0'.repeat(32)}`,
  toolsetId: 'ts',
  nativeName: 'show-chart',
  exposedName: 'show-chart',
  declaration: { name: 'show-chart', inputSchema: { type: 'object' } },
  fingerprint: 'a'.repeat(64),
  visibility: ['model', 'app'],
  resourceUri: 'ui://monitor/chart.html',
  catalogGeneration: '1.abc',
  connectionClass: 'app-safe',
  execution: { generationId: randomUUID(), fence: 1, ownerInstanceId: 'owner-1', bindingGeneration: 1 },
};
const fullResult = { content: [{ type: 'text', text: 'chart ready' }], structuredContent: { secret: SECRET }, _meta: { m: 1 } };

const poll = (overrides: Partial<AuditEntry> = {}): AuditEntry => ({
  method: 'tools/call',
  tool: 'poll-system-stats',
  uri: null,
  decision: 'executed',
  outcome: 'ok',
  reason: null,
  replayed: false,
  durationMs: 4,
  seal: null,
  ...overrides,
});

function viewOf(session: SessionKey, audit: { maxRecordsPerView?: number; maxAgeMs?: number } = {}): ViewContext {
  const now = Date.now();
  const record: ViewRecord = {
    v: 1,
    viewId: `vw-${randomBytes(16).toString('hex')}`,
    mode: 'live',
    state: 'ACTIVE',
    reason: null,
    principalDigest: 'c'.repeat(64),
    opener: null,
    session,
    incarnation: 1,
    widget: { widgetId: '2:fc-1', eventId: 2, functionCallId: 'fc-1', resourceUri: 'ui://monitor/view.html', tool: 'show-monitor', toolsetId: 'ts' },
    viewGeneration: 1,
    serverId: 'system-monitor',
    profileId: 'p1',
    bindingRevision: 'v1.k1.abcd',
    bindingGeneration: 1,
    generation: { ...CHART.execution, connectionClass: 'app-safe' },
    leaseId: randomUUID(),
    released: false,
    grantDigest: 'd'.repeat(64),
    leaseMs: 60_000,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 60_000).toISOString(),
    teardownRequestedAt: null,
    actions: [],
    replaySafe: false,
    register: null,
    contextSequence: 0,
  };
  const profile = { ...testProfile(), audit };
  return { view: { record, raw: JSON.stringify(record) }, profile, policy: viewPolicyOf(profile) };
}

const recordOf = (e: PublicEvent) => e.customMetadata?.[APP_AUDIT_METADATA_KEY] as AppAuditRecord | undefined;

describe('AppAudit (real lifecycle-store and sealed-result-store processes, real NATS, PostgreSQL and Redis)', () => {
  let stores: StoreProcesses;
  let coordination: CoordinationStore;
  let sealed: SealedResultClient;
  let audit: AppAudit;
  let pg: Client;
  let sessions = 0;
  const logs = captureServiceLogs('warn');

  beforeAll(async () => {
    stores = await startStoreProcesses({ lifecycle: { LIFECYCLE_CASCADE_PARTICIPANTS: 'sealed-result-store' }, sealed: { SEALED_GC_INTERVAL_MS: '0' } });
    coordination = await createCoordinationStore({ url: TEST_REDIS_URL, keyPrefix: `apphost:${stores.prefix}governed-operations:`, name: 'app-audit-spec' });
    sealed = new SealedResultClient(stores.bus, { timeoutMs: 10_000 });
    audit = new AppAudit(stores.bus, sealed, coordination, testLogger('app-audit'), { timeoutMs: 10_000 });
    pg = new Client({ connectionString: TEST_DATABASE_URL });
    await pg.connect();
  }, 180_000);

  afterAll(async () => {
    logs.stop();
    await pg?.end();
    // This run's View counts (its own key prefix): leave nothing behind in the shared Redis.
    for (const key of (await coordination?.keysWithPrefix('view-audit:')) ?? []) {
      const value = await coordination.get(key);
      if (value !== null) await coordination.compareAndDelete(key, value);
    }
    await coordination?.close();
    await stores?.stop();
  }, 60_000);

  async function newSession(): Promise<SessionKey> {
    const session = { tenant: 'acme', appName: 'monitor', userId: 'alice', sessionId: `audit-${++sessions}-${randomBytes(3).toString('hex')}` };
    await stores.bus.request(LifecycleCreateSession, { session, creationOperationId: `op-${session.sessionId}` });
    return session;
  }
  const events = async (session: SessionKey, audience: 'model' | 'all' = 'all') =>
    (await stores.bus.request(LifecycleListEvents, { session, limit: 500, audience })).events;
  const operationsOf = async (view: ViewContext) =>
    (await events(view.view.record.session)).filter((e) => recordOf(e)?.kind === 'operation' && recordOf(e)?.viewId === view.view.record.viewId);
  const sealedRows = async (session: SessionKey) =>
    (
      await pg.query<{ state: string; event_id: string | null }>(
        `SELECT state, event_id FROM "${stores.prefix}sealed_result_store".sealed_records WHERE tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`,
        [session.tenant, session.appName, session.userId, session.sessionId],
      )
    ).rows;

  it('appends one event per operation, stamped app_audit / mcp_app / app by the ledger, with the record and no bytes; model reads never see it', async () => {
    const session = await newSession();
    const view = viewOf(session);
    await stores.bus.request(LifecycleAppendEvents, { session, incarnation: 1, provenance: { path: 'user-turn' }, events: [{ author: 'agent' }] });
    await audit.record(view, poll());
    await audit.record(view, poll({ tool: 'model-only', decision: 'denied', outcome: 'PERMISSION_DENIED', reason: 'TOOL_NOT_APP_VISIBLE', durationMs: 0.4 }));
    await audit.record(view, poll({ method: 'resources/read', tool: null, uri: 'ui://monitor/data.json', replayed: true, durationMs: 7.6 }));

    const all = await events(session);
    const audited = all.filter((e) => e.audience === 'app_audit');
    expect(audited).toHaveLength(3);
    for (const e of audited) {
      expect(e).toMatchObject({ author: 'apphost-view', invocationOrigin: 'mcp_app', emitter: 'host', immediateCaller: 'app' });
      expect(e.functionResponses).toBeUndefined();
      expect(e.sealedResultRefs).toBeUndefined();
    }
    const base = { kind: 'operation', viewId: view.view.record.viewId, widgetId: '2:fc-1', functionCallId: null, at: expect.any(String) };
    expect(audited.map(recordOf)).toEqual([
      {
        ...base,
        method: 'tools/call',
        tool: 'poll-system-stats',
        uri: null,
        decision: 'executed',
        outcome: 'ok',
        reason: null,
        replayed: false,
        durationMs: 4,
      },
      {
        ...base,
        method: 'tools/call',
        tool: 'model-only',
        uri: null,
        decision: 'denied',
        outcome: 'PERMISSION_DENIED',
        reason: 'TOOL_NOT_APP_VISIBLE',
        replayed: false,
        durationMs: 0,
      },
      {
        ...base,
        method: 'resources/read',
        tool: null,
        uri: 'ui://monitor/data.json',
        decision: 'executed',
        outcome: 'ok',
        reason: null,
        replayed: true,
        durationMs: 8,
      },
    ]);
    expect((await events(session, 'model')).map((e) => e.author)).toEqual(['agent']);
  });

  it("seals a UI-associated tool's full result: the event lists it under a host-minted va- id, the reference resolves and is committed, no bytes in the ledger", async () => {
    const session = await newSession();
    const view = viewOf(session);
    await audit.record(view, poll({ tool: 'show-chart', seal: { tool: CHART, arguments: { range: ARGUMENT }, result: fullResult } }));

    const [event] = await operationsOf(view);
    const record = recordOf(event) as Extract<AppAuditRecord, { kind: 'operation' }>;
    expect(record.functionCallId).toMatch(/^va-[0-9a-f]{32}$/);
    const functionCallId = record.functionCallId!;
    expect(event.functionResponses).toEqual([{ id: functionCallId, name: 'show-chart' }]);
    const ref = event.sealedResultRefs![functionCallId];
    expect(Object.keys(event.sealedResultRefs!)).toEqual([functionCallId]);
    expect(JSON.stringify(await events(session))).not.toMatch(new RegExp(`${SECRET}|${ARGUMENT}|chart ready`));

    const resolved = await sealed.resolve({ session, incarnation: 1, eventId: String(event.id), functionCallId, recordId: ref.recordId });
    expect(resolved.envelope.result).toEqual(fullResult);
    expect(resolved.envelope.refresh).toMatchObject({
      toolsetId: 'ts',
      nativeToolName: 'show-chart',
      arguments: { kind: 'inline', value: { range: ARGUMENT } },
      initiatingOrigin: 'app',
      correlation: { functionCallId },
    });
    expect(await sealedRows(session)).toEqual([{ state: 'COMMITTED', event_id: String(event.id) }]);
  });

  it('a refused append after sealing: the error is rethrown, the sealed record is never committed, and GC collects it', async () => {
    // A session the ledger does not know: the seal is accepted, the append refused.
    const session = { tenant: 'acme', appName: 'monitor', userId: 'alice', sessionId: `never-created-${randomBytes(3).toString('hex')}` };
    const shortLived = new AppAudit(stores.bus, sealed, coordination, testLogger('app-audit'), { timeoutMs: 10_000, pendingTtlMs: 1 });
    await expectAppError(shortLived.record(viewOf(session), poll({ seal: { tool: CHART, arguments: {}, result: fullResult } })), 'NOT_FOUND');
    expect(await sealedRows(session)).toEqual([{ state: 'PENDING', event_id: null }]);
    await sleep(20);
    await eventually(async () => {
      await stores.bus.request(SealedGc, {});
      return (await sealedRows(session)).length === 0;
    }, 10_000);
  });

  it('a polling View (1,800 calls) stays bounded: never more than maxRecordsPerView operation records between calls, every call counted', async () => {
    const session = await newSession();
    const max = 20;
    const view = viewOf(session, { maxRecordsPerView: max });
    const calls = 1_800;
    let peak = 0;
    for (let i = 1; i <= calls; i++) {
      await audit.record(view, poll({ outcome: i % 10 === 0 ? 'UNAVAILABLE' : 'ok' }));
      if (i % 50 === 0) peak = Math.max(peak, (await operationsOf(view)).length);
    }
    const all = (await events(session)).filter((e) => recordOf(e)?.viewId === view.view.record.viewId);
    const summaries = all.filter((e) => recordOf(e)?.kind === 'summary');
    const operations = all.filter((e) => recordOf(e)?.kind === 'operation').map((e) => recordOf(e) as Extract<AppAuditRecord, { kind: 'operation' }>);
    expect(peak).toBeLessThanOrEqual(max);
    expect(operations.length).toBeGreaterThanOrEqual(keepLastOf(max));
    expect(operations.length).toBeLessThanOrEqual(max);
    expect(summaries).toHaveLength(1);
    const summary = recordOf(summaries[0]) as Extract<AppAuditRecord, { kind: 'summary' }>;
    expect(summary.count + operations.length).toBe(calls);
    expect(summary.byOutcome['UNAVAILABLE'] + operations.filter((r) => r.outcome === 'UNAVAILABLE').length).toBe(calls / 10);
    expect(summary.byOutcome['ok'] + operations.filter((r) => r.outcome === 'ok').length).toBe(calls - calls / 10);
    expect(summary.byDecision).toEqual({ executed: summary.count });
  }, 240_000);

  it('two replicas serving concurrent calls of one View share the count: bounded, and every call counted exactly once', async () => {
    const session = await newSession();
    const max = 10;
    const view = viewOf(session, { maxRecordsPerView: max });
    const other = new AppAudit(stores.bus, sealed, coordination, testLogger('app-audit-2'), { timeoutMs: 10_000 });
    const rounds = 100;
    let peak = 0;
    for (let round = 1; round <= rounds; round++) {
      await Promise.all([audit.record(view, poll()), other.record(view, poll())]);
      if (round % 10 === 0) peak = Math.max(peak, (await operationsOf(view)).length);
    }
    // Two calls in flight at once: a compaction may miss the one that raced it, never more.
    expect(peak).toBeLessThanOrEqual(max + 2);
    const all = (await events(session)).filter((e) => recordOf(e)?.viewId === view.view.record.viewId);
    const summary = recordOf(all.find((e) => recordOf(e)?.kind === 'summary')!) as Extract<AppAuditRecord, { kind: 'summary' }>;
    expect(summary.count + all.filter((e) => recordOf(e)?.kind === 'operation').length).toBe(2 * rounds);
  }, 120_000);

  it('counts concurrent appends exactly (one atomic increment each); a count in an earlier format is recounted', async () => {
    const session = await newSession();
    const view = viewOf(session, { maxRecordsPerView: 100 });
    const key = auditCountKeyOf(view.view.record.viewId);
    await coordination.setIfAbsent(key, JSON.stringify({ n: 3, oldestAt: Date.now() }), 60_000);
    await audit.record(view, poll()); // unreadable as a counter: compacted, and the exact count written
    expect(Number(await coordination.get(key)) - KNOWN_BASE).toBe(1);
    await Promise.all(Array.from({ length: 12 }, () => audit.record(view, poll())));
    expect(Number(await coordination.get(key)) - KNOWN_BASE).toBe(13);
    expect(await operationsOf(view)).toHaveLength(13);
  });

  it('folds records older than maxAgeMs at the next append', async () => {
    const session = await newSession();
    const view = viewOf(session, { maxAgeMs: 1_500 });
    for (let i = 0; i < 3; i++) await audit.record(view, poll());
    await sleep(1_700);
    await audit.record(view, poll({ tool: 'fresh' }));
    const left = await operationsOf(view);
    expect(left.map((e) => (recordOf(e) as Extract<AppAuditRecord, { kind: 'operation' }>).tool)).toEqual(['fresh']);
    const summary = (await events(session)).find((e) => recordOf(e)?.kind === 'summary');
    expect(recordOf(summary!)).toMatchObject({ kind: 'summary', count: 3 });
  });

  it('retention is best effort: with the coordination store down every operation is still audited and nothing throws; the count recovers', async () => {
    const session = await newSession();
    const view = viewOf(session, { maxRecordsPerView: 4 });
    const down = await createCoordinationStore({ url: TEST_REDIS_URL, keyPrefix: `apphost:${stores.prefix}governed-operations:`, name: 'closed' });
    await down.close();
    const blind = new AppAudit(stores.bus, sealed, down, testLogger('app-audit'), { timeoutMs: 10_000 });
    for (let i = 0; i < 8; i++) await blind.record(view, poll());
    expect(logs.lines.some((l) => String(l.msg).startsWith('app audit count unavailable'))).toBe(true);
    // Every append found the count unknown and compacted: the ledger stays bounded, and every call is counted.
    const summaryOf = async () =>
      recordOf((await events(session)).find((e) => recordOf(e)?.kind === 'summary')!) as Extract<AppAuditRecord, { kind: 'summary' }>;
    expect(await operationsOf(view)).toHaveLength(keepLastOf(4));
    expect((await summaryOf()).count).toBe(8 - keepLastOf(4));
    // With the store back, the next append finds no count, compacts and writes the exact count.
    await audit.record(view, poll());
    const count = Number(await coordination.get(auditCountKeyOf(view.view.record.viewId))) - KNOWN_BASE;
    expect(count).toBe((await operationsOf(view)).length);
    expect(count + (await summaryOf()).count).toBe(9);
  });

  it("the session's deletion cascade removes its audit events, summaries and sealed results", async () => {
    const session = await newSession();
    const view = viewOf(session, { maxRecordsPerView: 2 });
    for (let i = 0; i < 4; i++) await audit.record(view, poll());
    await audit.record(view, poll({ seal: { tool: CHART, arguments: {}, result: fullResult } }));
    expect((await events(session)).some((e) => recordOf(e)?.kind === 'summary')).toBe(true);
    expect(await sealedRows(session)).toHaveLength(1);

    expect((await stores.bus.request(LifecycleDeleteSession, { session })).state).toBe('DELETED');
    await expectAppError(events(session), 'NOT_FOUND');
    const { rows } = await pg.query(
      `SELECT 1 FROM "${stores.prefix}lifecycle_store".session_events WHERE tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`,
      [session.tenant, session.appName, session.userId, session.sessionId],
    );
    expect(rows).toEqual([]);
    expect(await sealedRows(session)).toEqual([]);
  });
});
