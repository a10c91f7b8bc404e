import { ExportAuditDescribe, ExportAuditListExports, type SessionKey } from '@apphost/contracts';
import { bootService, dropSchemasWithPrefix, uniquePrefix, type ServiceUnderTest } from '@apphost/testing';
import { exportAuditService } from '../service';
import { EXPORT_AUDIT_REVISION } from '../migrations/1768200000000-export-attempts';
import { ExportAuditStore, type ExportTarget } from './export-audit.store';

/** The audit store on real PostgreSQL (through the booted service, so its migrations and readiness are the real ones). */
describe('export-audit store', () => {
  const prefix = uniquePrefix();
  let svc: ServiceUnderTest;
  let store: ExportAuditStore;
  const session: SessionKey = { tenant: 'acme', appName: 'app', userId: 'alice', sessionId: 's1' };
  const target = (over: Partial<ExportTarget> = {}): ExportTarget => ({ session, eventId: 3, functionCallId: 'c1', projection: 'content', ...over });
  const authorized = (operationId: string, over: Partial<Parameters<ExportAuditStore['insert']>[0]> = {}) =>
    store.insert({
      operationId,
      target: target(),
      incarnation: 1,
      recordId: 'rec_AAAAAAAAAAAAAAAAAAAAAA',
      toolsetId: 'ts',
      principalDigest: store.principalDigest({ tenant: 'acme', subject: 'alice' }),
      status: 'authorized',
      reason: null,
      bytes: 12,
      ...over,
    });

  beforeAll(async () => {
    svc = await bootService(exportAuditService, prefix, { EXPORT_PURGE_INTERVAL_MS: '0', EXPORT_RETENTION_DAYS: '30' });
    store = svc.running.app.get(ExportAuditStore);
  }, 60_000);

  afterAll(async () => {
    await svc?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  it('readiness reports the schema, its namespace and the store revision', async () => {
    const described = await svc.client.request(ExportAuditDescribe, {});
    const pg = described.stores.find((s) => s.kind === 'postgres');
    expect(pg).toMatchObject({ ready: true, schema: `${prefix}export_audit`, revision: EXPORT_AUDIT_REVISION });
    expect(pg?.namespace).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keys one row per (tenant, operationId): a second insert answers the first row; the principal is only a keyed digest', async () => {
    const first = await authorized('op-1');
    const again = await authorized('op-1', { bytes: 99 });
    expect(again.exportId).toBe(first.exportId);
    expect(again.bytes).toBe(12);
    expect(first.principalDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(first.principalDigest).not.toContain('alice');
    expect(store.principalDigest({ tenant: 'acme', subject: 'alice' })).toBe(first.principalDigest);
    expect(store.principalDigest({ tenant: 'other', subject: 'alice' })).not.toBe(first.principalDigest);
    const { rows } = await store.database.query(`SELECT * FROM export_attempts WHERE operation_id = 'op-1'`);
    expect(rows).toHaveLength(1);
    // Target identifiers, decision and counts only: no content column, no principal subject or scopes.
    expect(Object.keys(rows[0] as object).sort()).toEqual(
      [
        'tenant',
        'operation_id',
        'export_id',
        'app_name',
        'user_id',
        'session_id',
        'incarnation',
        'event_id',
        'function_call_id',
        'record_id',
        'toolset_id',
        'purpose',
        'projection',
        'principal_digest',
        'decision',
        'status',
        'reason',
        'byte_count',
        'release_count',
        'created_at',
        'updated_at',
        'released_at',
        'retain_until',
      ].sort(),
    );
  });

  it('two replicas racing one operation id produce one row', async () => {
    const rows = await Promise.all(Array.from({ length: 8 }, () => authorized('op-race')));
    expect(new Set(rows.map((r) => r.exportId)).size).toBe(1);
    const { rows: count } = await store.database.query<{ n: string }>(`SELECT count(*) AS n FROM export_attempts WHERE operation_id = 'op-race'`);
    expect(Number(count[0].n)).toBe(1);
  });

  const limits = (operationId: string, over: Partial<Parameters<ExportAuditStore['settle']>[0]> = {}) => ({
    tenant: 'acme',
    operationId,
    session,
    incarnation: 1,
    principalDigest: store.principalDigest({ tenant: 'acme', subject: 'alice' }),
    since: new Date(Date.now() - 60_000),
    bulkCap: 1000,
    perPrincipalPerMinute: 1000,
    denial: null,
    ...over,
  });

  it('authorized → released counts each release; denied is final and keeps the release count', async () => {
    await authorized('op-2');
    expect((await store.settle(limits('op-2'))).row?.releaseCount).toBe(1);
    expect((await store.settle(limits('op-2'))).row?.releaseCount).toBe(2);
    await store.deny('acme', 'op-2', 'STALE_INCARNATION');
    expect(await store.settle(limits('op-2'))).toEqual({ row: null, deniedFor: null });
    expect(await store.load('acme', 'op-2')).toMatchObject({ status: 'denied', decision: 'deny', reason: 'STALE_INCARNATION', releaseCount: 2 });
  });

  it('the settling statement denies at the bulk cap of the session incarnation, then at the rate of the principal', async () => {
    const digest = store.principalDigest({ tenant: 'acme', subject: 'carol' });
    const s2 = { ...session, sessionId: 's-count' };
    const inS2 = (operationId: string, over: Partial<Parameters<ExportAuditStore['settle']>[0]> = {}) =>
      limits(operationId, { session: s2, principalDigest: digest, ...over });
    for (const id of ['c-1', 'c-2', 'c-3']) {
      await authorized(id, { target: target({ session: s2 }), principalDigest: digest });
      expect((await store.settle(inS2(id))).row).toMatchObject({ status: 'released', releaseCount: 1 });
    }
    await authorized('c-4', { target: target({ session: s2 }), principalDigest: digest });
    // Three releases in the incarnation: a cap of 3 denies; the row is denied with the reason, its count unchanged.
    expect(await store.settle(inS2('c-4', { bulkCap: 3 }))).toMatchObject({
      deniedFor: 'BULK_CAP_REACHED',
      row: { status: 'denied', decision: 'deny', reason: 'BULK_CAP_REACHED', releaseCount: 0, releasedAt: null },
    });
    await authorized('c-5', { target: target({ session: s2 }), principalDigest: digest });
    // Three other attempts of carol this minute (c-4 is denied, so it does not count): a rate of 3 denies the fourth.
    expect(await store.settle(inS2('c-5', { perPrincipalPerMinute: 3 }))).toMatchObject({ deniedFor: 'RATE_LIMITED', row: { status: 'denied' } });
    await authorized('c-6', { target: target({ session: s2 }), principalDigest: digest });
    // Both fit: a rate of 4 (c-1..c-3 + this one), a cap of 4, another incarnation's releases do not count; the window start is respected.
    expect((await store.settle(inS2('c-6', { perPrincipalPerMinute: 4, bulkCap: 4 }))).row).toMatchObject({ status: 'released', releaseCount: 1 });
    await authorized('c-7', { target: target({ session: s2 }), principalDigest: digest, incarnation: 2 });
    expect((await store.settle(inS2('c-7', { incarnation: 2, bulkCap: 1, perPrincipalPerMinute: 1, since: new Date(Date.now() + 60_000) }))).row).toMatchObject(
      { status: 'released', releaseCount: 1 },
    );
    // A reason the caller found is recorded when the limits fit; a limit that does not fit is recorded instead.
    await authorized('c-8', { target: target({ session: s2 }), principalDigest: digest });
    expect(await store.settle(inS2('c-8', { denial: 'BINDING_CHANGED' }))).toMatchObject({
      deniedFor: 'BINDING_CHANGED',
      row: { status: 'denied', reason: 'BINDING_CHANGED', releaseCount: 0 },
    });
    await authorized('c-9', { target: target({ session: s2 }), principalDigest: digest });
    expect(await store.settle(inS2('c-9', { denial: 'BINDING_CHANGED', bulkCap: 1 }))).toMatchObject({
      deniedFor: 'BULK_CAP_REACHED',
      row: { status: 'denied', reason: 'BULK_CAP_REACHED' },
    });
  });

  it('the counts stop at their limits and judge as the whole history would (a retried row counts all its releases)', async () => {
    const digest = store.principalDigest({ tenant: 'acme', subject: 'dave' });
    const s3 = { ...session, sessionId: 's-bounded' };
    const inS3 = (operationId: string, over: Partial<Parameters<ExportAuditStore['settle']>[0]> = {}) =>
      limits(operationId, { session: s3, principalDigest: digest, ...over });
    await authorized('d-1', { target: target({ session: s3 }), principalDigest: digest });
    for (let i = 0; i < 3; i++) await store.settle(inS3('d-1')); // one row released three times
    for (const id of ['d-2', 'd-3', 'd-4', 'd-5']) {
      await authorized(id, { target: target({ session: s3 }), principalDigest: digest });
      await store.settle(inS3(id));
    }
    // 7 releases over 5 rows; the 5 other attempts of dave are in the window.
    for (const [id, over, verdict] of [
      ['d-6', { bulkCap: 2 }, 'BULK_CAP_REACHED'],
      ['d-7', { bulkCap: 7 }, 'BULK_CAP_REACHED'],
      ['d-8', { perPrincipalPerMinute: 5 }, 'RATE_LIMITED'],
    ] as const) {
      await authorized(id, { target: target({ session: s3 }), principalDigest: digest });
      expect(await store.settle(inS3(id, over))).toMatchObject({ deniedFor: verdict, row: { status: 'denied', reason: verdict } });
    }
    await authorized('d-9', { target: target({ session: s3 }), principalDigest: digest });
    expect((await store.settle(inS3('d-9', { bulkCap: 8, perPrincipalPerMinute: 6 }))).row).toMatchObject({ status: 'released', releaseCount: 1 });
  });

  it('lists a session redacted (no principal digest, no record id); cascade delete and the retention purge remove rows', async () => {
    const s3 = { ...session, sessionId: 's-list' };
    await authorized('l-1', { target: target({ session: s3 }) });
    await store.insert({
      operationId: 'l-2',
      target: target({ session: s3, eventId: 4 }),
      incarnation: null,
      recordId: null,
      toolsetId: null,
      principalDigest: store.principalDigest({ tenant: 'acme', subject: 'alice' }),
      status: 'denied',
      reason: 'TARGET_NOT_FOUND',
      bytes: null,
    });
    const listed = await svc.client.request(ExportAuditListExports, { session: s3 });
    expect(listed.exports.map((r) => [r.operationId, r.status, r.reason])).toEqual([
      ['l-1', 'authorized', null],
      ['l-2', 'denied', 'TARGET_NOT_FOUND'],
    ]);
    const text = JSON.stringify(listed);
    expect(text).not.toMatch(/principal|digest|rec_AAAA/i);
    expect(new Date(listed.exports[0].retainUntil).getTime() - new Date(listed.exports[0].createdAt).getTime()).toBe(30 * 24 * 3600 * 1000);

    expect(await store.deleteSession(s3, 1)).toBe(2);
    await authorized('p-1', { target: target({ session: { ...session, sessionId: 's-purge' } }) });
    expect(await store.purgeExpired(new Date())).toBe(0);
    expect(await store.purgeExpired(new Date(Date.now() + 31 * 24 * 3600 * 1000))).toBeGreaterThanOrEqual(1);
    expect(await store.load('acme', 'p-1')).toBeNull();
  });
});
