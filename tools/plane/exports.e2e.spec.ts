import {
  ExportAuditDescribe,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRevokeToolset,
  RegistryRotateKeys,
  type HostProfile,
  type RunToolBatchResponse,
} from '@apphost/contracts';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import { bootService, captureServiceLogs, descriptors, dropSchemasWithPrefix, latch, startPrivateNats, uniquePrefix, type PrivateNats } from '@apphost/testing';
import { fixtureSpec, profile, token } from './catalog-harness';
import { bootExportPlane, type ExportPlaneServices } from './exports-harness';
import { loadServiceDefinitions } from './services';

jest.setTimeout(120_000);

/** The parts of a gateway reply these tests read (a success or an error envelope). */
interface Reply {
  error: { code: string; details: Record<string, unknown> };
  result: Record<string, unknown>;
  exportId: string;
  exports: Array<Record<string, unknown>>;
  events: unknown[];
  [key: string]: unknown;
}
type HttpReply = { status: number; text: string; body: Reply };

/** Key rotation keeps the previous key verifying for this long; the expired-key case waits past it. */
const VERIFY_WINDOW_MS = 4000;
const WIDE: HostProfile['export'] = { projections: ['content', 'structured', 'full'], maxBytes: 64 * 1024, perPrincipalPerMinute: 1000, bulkCap: 1000 };
const TIGHT: HostProfile['export'] = { projections: ['content'], maxBytes: 400, perPrincipalPerMinute: 2, bulkCap: 2 };
const SMALL: HostProfile['export'] = { projections: ['content'], maxBytes: 20, perPrincipalPerMinute: 100, bulkCap: 100 };

/**
 * Export end to end on the real plane: gateway, lifecycle-store, sealed-result-store, export-audit, binding-registry,
 * catalog-policy and governed-operations booted by path on a private NATS, real PostgreSQL and Redis, a real stdio MCP
 * App server. Races land at export-audit's `export.before-recheck` point (after the store load and the audit row,
 * before release); crashes are its other fault points.
 */
describe('export in the plane', () => {
  const prefix = uniquePrefix();
  let nats: PrivateNats;
  let services: ExportPlaneServices;
  let stopPlane: () => Promise<void>;
  let base: string;
  let alice: string;
  let faults: FaultPoints;
  let logs: ReturnType<typeof captureServiceLogs>;

  const http = async (method: string, url: string, body?: unknown, bearer = alice, headers: Record<string, string> = {}): Promise<HttpReply> => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Reply };
  };
  const createSession = async (appName: string, sessionId: string, bearer = alice) =>
    expect((await http('POST', '/v1/sessions', { appName, sessionId }, bearer)).status).toBe(201);
  /** One UI call in a fresh session: the sealed result's locator and the nonce only the sealed record holds. */
  const sealedCall = async (appName: string, sessionId: string, bearer = alice) => {
    await createSession(appName, sessionId, bearer);
    const res = await http(
      'POST',
      `/v1/sessions/${sessionId}/tool-batches`,
      { appName, invocationId: 'inv', calls: [{ tool: 'start-session', arguments: {} }] },
      bearer,
    );
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    const [d] = descriptors(ev);
    expect(d.sealedResultRef).not.toBeNull();
    const text = (ev.functionResponses[0].response.content as Array<{ text: string }>)[0].text;
    const nonce = (JSON.parse(text) as { nonce: string }).nonce;
    expect(nonce).toMatch(/^[0-9a-f-]{36}$/);
    return { appName, sessionId, eventId: ev.eventId, functionCallId: d.correlation.functionCallId, nonce };
  };
  const exportOf = (
    t: { appName: string; sessionId: string; eventId: number; functionCallId: string },
    operationId: string,
    projection = 'content',
    bearer = alice,
    headers: Record<string, string> = {},
  ) =>
    http(
      'POST',
      '/v1/exports',
      { appName: t.appName, sessionId: t.sessionId, eventId: t.eventId, functionCallId: t.functionCallId, operationId, projection },
      bearer,
      headers,
    );
  const rows = async (appName: string, sessionId: string, bearer = alice) => {
    const res = await http('GET', `/v1/exports?appName=${appName}&sessionId=${sessionId}`, undefined, bearer);
    expect(res.status).toBe(200);
    return res.body.exports;
  };
  /** Holds the export open at `export.before-recheck` while `race` runs, then lets it continue. */
  const landBeforeRelease = async (race: () => Promise<unknown>, exporting: () => Promise<HttpReply>) => {
    const hold = latch();
    faults.arm('export.before-recheck', hold.action);
    const pending = exporting();
    await hold.reached;
    await race();
    hold.release();
    return pending;
  };

  beforeAll(async () => {
    nats = await startPrivateNats();
    logs = captureServiceLogs('debug');
    const plane = await bootExportPlane(
      nats.url,
      prefix,
      { 'nonce-app': 'nonce', 'tight-app': 'tight', 'revoke-app': 'revoked', 'small-app': 'small' },
      { REGISTRY_KEY_VERIFY_WINDOW_MS: String(VERIFY_WINDOW_MS) },
    );
    services = plane;
    stopPlane = plane.stop;
    base = plane.base;
    faults = services.exportAudit.running.app.get(FAULT_POINTS);
    alice = await token('alice', 'runtime export audit');
    const registry = services.registry.client;
    await registry.request(RegistryPutProfile, { profileId: 'p-wide', profile: { ...profile(), export: WIDE } });
    await registry.request(RegistryPutProfile, { profileId: 'p-tight', profile: { ...profile(), export: TIGHT } });
    await registry.request(RegistryPutProfile, { profileId: 'p-small', profile: { ...profile(), export: SMALL } });
    for (const [toolsetId, profileId] of [
      ['nonce', 'p-wide'],
      ['tight', 'p-tight'],
      ['revoked', 'p-wide'],
      ['small', 'p-small'],
    ]) {
      const put = await registry.request(RegistryPutToolset, { toolsetId, spec: fixtureSpec('stateful-nonce', profileId) }, { timeoutMs: 30_000 });
      expect(put.status.state).toBe('PROFILE_BOUND');
    }
  }, 180_000);

  afterAll(async () => {
    logs?.stop();
    await stopPlane?.();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  afterEach(() => faults.disarm());

  it('releases each projection as one JSON body, audited as released; a retry counts the release; another target is CONFLICT', async () => {
    const t = await sealedCall('nonce-app', 'x-happy');
    const content = await exportOf(t, 'op-happy-content', 'content');
    expect(content.status).toBe(200);
    expect(Object.keys(content.body).sort()).toEqual(['bytes', 'exportId', 'releaseCount', 'result', 'status']);
    expect(content.body).toMatchObject({ status: 'released', releaseCount: 1 });
    expect(Object.keys(content.body.result).sort()).toEqual(['content']);
    const structured = await exportOf(t, 'op-happy-structured', 'structured');
    expect(structured.body.result).toMatchObject({ nonce: t.nonce });
    const full = await exportOf(t, 'op-happy-full', 'full');
    expect(full.body.result).toMatchObject({ structuredContent: { nonce: t.nonce }, content: expect.any(Array) });
    // Never HTML, never a View grant or a template.
    for (const r of [content, structured, full]) expect(r.text).not.toMatch(/text\/html|<html|grant|ui:\/\//i);

    const again = await exportOf(t, 'op-happy-content', 'content');
    expect(again.body).toMatchObject({ exportId: content.body.exportId, releaseCount: 2 });
    const other = await exportOf({ ...t, functionCallId: 'another-call' }, 'op-happy-content', 'content');
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'CONFLICT', details: { reason: 'OPERATION_REUSED' } });

    const audit = await rows('nonce-app', 'x-happy');
    expect(audit.map((r) => [r.operationId, r.status, r.releaseCount])).toEqual([
      ['op-happy-content', 'released', 2],
      ['op-happy-structured', 'released', 1],
      ['op-happy-full', 'released', 1],
    ]);
    expect(JSON.stringify(audit)).not.toContain(t.nonce);
    expect(JSON.stringify(audit)).not.toMatch(/principal|digest/i);
  });

  it('export records never enter the events or any model-facing surface, and an export mints no View', async () => {
    const t = await sealedCall('nonce-app', 'x-surface');
    const res = await exportOf(t, 'op-surface', 'full');
    expect(res.status).toBe(200);
    const listed = await http('GET', `/v1/sessions/${t.sessionId}/events?appName=${t.appName}`);
    expect(listed.body.events).toHaveLength(1);
    expect(listed.text).not.toContain(res.body.exportId);
    expect(listed.text).not.toContain('op-surface');
    expect(listed.text).not.toMatch(/export/i);
    expect(res.body).not.toHaveProperty('view');
    expect(res.body).not.toHaveProperty('grant');
  });

  it('log redaction: no service logs the exported bytes, the bearer token or the principal digest', async () => {
    const t = await sealedCall('nonce-app', 'x-logs');
    const before = logs.lines.length;
    const res = await exportOf(t, 'op-logs', 'full');
    expect(res.status).toBe(200);
    const denied = await exportOf({ ...t, functionCallId: 'fc-missing' }, 'op-logs-denied');
    expect(denied.status).toBe(404);
    const lines = logs.lines.slice(before);
    expect(lines.some((l) => l.service === 'export-audit' && l.msg === 'export released')).toBe(true);
    expect(lines.some((l) => l.service === 'export-audit' && l.msg === 'export denied' && l.reason === 'TARGET_NOT_FOUND')).toBe(true);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(t.nonce);
    expect(text).not.toContain(alice);
    expect(text).not.toMatch(/principal_?digest|"[0-9a-f]{64}"/i);
  });

  it('an old credential context: another principal reusing an operation id is CONFLICT and releases nothing', async () => {
    const t = await sealedCall('nonce-app', 'x-old-credential');
    expect((await exportOf(t, 'op-old-credential')).status).toBe(200);
    const bob = await token('bob', 'runtime export audit');
    const reused = await exportOf(t, 'op-old-credential', 'content', bob);
    expect(reused.status).toBe(409);
    expect(reused.body.error.details.reason).toBe('OPERATION_REUSED');
    expect(reused.text).not.toContain(t.nonce);
  });

  it('streaming is refused: Accept text/event-stream is 406 INVALID_ARGUMENT STREAMING_NOT_SUPPORTED, nothing recorded', async () => {
    const t = await sealedCall('nonce-app', 'x-stream');
    const res = await exportOf(t, 'op-stream', 'content', alice, { accept: 'text/event-stream' });
    expect(res.status).toBe(406);
    expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'STREAMING_NOT_SUPPORTED' } });
    expect(await rows('nonce-app', 'x-stream')).toEqual([]);
  });

  it('cross-tenant and cross-user locator swapping reads as absent and releases nothing', async () => {
    const t = await sealedCall('nonce-app', 'x-swap');
    const mallory = await token('alice', 'runtime export audit', 'evil');
    const foreign = await exportOf(t, 'op-swap-tenant', 'content', mallory);
    expect(foreign.status).toBe(404);
    expect(foreign.text).not.toContain(t.nonce);
    const bob = await token('bob', 'runtime export audit');
    const otherUser = await exportOf(t, 'op-swap-user', 'content', bob);
    expect(otherUser.status).toBe(404);
    expect(otherUser.text).not.toContain(t.nonce);
    // A swapped function call of the right session is NOT_FOUND too, and the denial is recorded.
    const swapped = await exportOf({ ...t, functionCallId: 'fc-not-mine' }, 'op-swap-call');
    expect(swapped.status).toBe(404);
    expect((await rows('nonce-app', 'x-swap')).map((r) => [r.operationId, r.status, r.reason])).toEqual([['op-swap-call', 'denied', 'TARGET_NOT_FOUND']]);
  });

  it('principal revocation: without the export scope is 403; the audit listing needs audit or admin', async () => {
    const t = await sealedCall('nonce-app', 'x-scope');
    const runtimeOnly = await token('alice', 'runtime');
    const res = await exportOf(t, 'op-scope', 'content', runtimeOnly);
    expect(res.status).toBe(403);
    expect(res.text).not.toContain(t.nonce);
    expect((await http('GET', `/v1/exports?appName=nonce-app&sessionId=x-scope`, undefined, runtimeOnly)).status).toBe(403);
    const auditor = await token('auditor', 'audit');
    const listed = await http('GET', `/v1/exports?appName=nonce-app&sessionId=x-scope&userId=alice`, undefined, auditor);
    expect(listed.status).toBe(200);
  });

  it('a principal revoked by an admin exports nothing (403 PRINCIPAL_REVOKED, recorded); restored, it exports again', async () => {
    const admin = await token('root', 'admin');
    const erin = await token('erin', 'runtime export audit');
    const t = await sealedCall('nonce-app', 'x-revoked-principal', erin);
    const principal = { tenant: 'acme', subject: 'erin' };
    expect((await http('POST', '/v1/principals:revoke', principal, admin)).status).toBe(200);
    const denied = await exportOf(t, 'op-revoked-1', 'content', erin);
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.reason).toBe('PRINCIPAL_REVOKED');
    expect(denied.text).not.toContain(t.nonce);
    expect((await http('POST', '/v1/principals:restore', principal, admin)).status).toBe(200);
    const restored = await exportOf(t, 'op-revoked-2', 'content', erin);
    expect(restored.status).toBe(200);
    expect(restored.text).toContain(t.nonce);
    const audit = await rows('nonce-app', 'x-revoked-principal', erin);
    expect(audit.find((r) => r.operationId === 'op-revoked-1')).toMatchObject({ status: 'denied', reason: 'PRINCIPAL_REVOKED', releaseCount: 0 });
    expect(audit.find((r) => r.operationId === 'op-revoked-2')).toMatchObject({ status: 'released', releaseCount: 1 });
  });

  it('a principal revocation landing after the store load, before release, is denied and releases nothing', async () => {
    const admin = await token('root', 'admin');
    const frank = await token('frank', 'runtime export audit');
    const t = await sealedCall('nonce-app', 'x-revoke-race', frank);
    const principal = { tenant: 'acme', subject: 'frank' };
    try {
      const res = await landBeforeRelease(
        async () => expect((await http('POST', '/v1/principals:revoke', principal, admin)).status).toBe(200),
        () => exportOf(t, 'op-revoke-race', 'content', frank),
      );
      expect(res.status).toBe(403);
      expect(res.body.error.details.reason).toBe('PRINCIPAL_REVOKED');
      expect(res.text).not.toContain(t.nonce);
      const [row] = await rows('nonce-app', 'x-revoke-race', frank);
      expect(row).toMatchObject({ operationId: 'op-revoke-race', status: 'denied', reason: 'PRINCIPAL_REVOKED', releaseCount: 0 });
    } finally {
      await http('POST', '/v1/principals:restore', principal, admin);
    }
  });

  it('a deleted and a recreated session: the old incarnation exports nothing; the redacted rows are kept', async () => {
    const t = await sealedCall('nonce-app', 'x-recreate');
    expect((await exportOf(t, 'op-recreate-1')).status).toBe(200);
    expect((await http('DELETE', `/v1/sessions/x-recreate?appName=nonce-app`)).status).toBe(200);
    const afterDelete = await exportOf(t, 'op-recreate-2');
    expect(afterDelete.status).toBe(404);
    await createSession('nonce-app', 'x-recreate');
    const oldIncarnation = await exportOf(t, 'op-recreate-3');
    expect(oldIncarnation.status).toBe(404);
    expect(oldIncarnation.text).not.toContain(t.nonce);
    // The released retry of the old incarnation is re-checked and denied (final).
    const retry = await exportOf(t, 'op-recreate-1');
    expect(retry.status).toBe(400);
    expect(retry.body.error.details.reason).toBe('STALE_INCARNATION');
    const audit = await rows('nonce-app', 'x-recreate');
    expect(audit.find((r) => r.operationId === 'op-recreate-1')).toMatchObject({ status: 'denied', releaseCount: 1, incarnation: 1 });
  });

  it.each([
    ['delete', 404, 'SESSION_NOT_ACTIVE'],
    ['recreate', 400, 'STALE_INCARNATION'],
  ])('a session %s landing after the store load, before release, is denied and releases nothing', async (kind, status, reason) => {
    const sessionId = `x-race-${kind}`;
    const t = await sealedCall('nonce-app', sessionId);
    const res = await landBeforeRelease(
      async () => {
        expect((await http('DELETE', `/v1/sessions/${sessionId}?appName=nonce-app`)).status).toBe(200);
        if (kind === 'recreate') await createSession('nonce-app', sessionId);
      },
      () => exportOf(t, `op-race-${kind}`),
    );
    expect(res.status).toBe(status);
    expect(res.body.error.details.reason).toBe(reason);
    expect(res.text).not.toContain(t.nonce);
    const [row] = await rows('nonce-app', sessionId);
    expect(row).toMatchObject({ operationId: `op-race-${kind}`, status: 'denied', reason, releaseCount: 0 });
  });

  it('a toolset revoke landing before release is denied and releases nothing', async () => {
    const t = await sealedCall('revoke-app', 'x-revoke');
    const res = await landBeforeRelease(
      () => services.registry.client.request(RegistryRevokeToolset, { toolsetId: 'revoked' }, { timeoutMs: 30_000 }),
      () => exportOf(t, 'op-revoke'),
    );
    expect(res.status).toBe(400);
    expect(res.body.error.details.reason).toBe('NOT_PROFILE_BOUND');
    expect(res.text).not.toContain(t.nonce);
    expect((await rows('revoke-app', 'x-revoke'))[0]).toMatchObject({ status: 'denied', reason: 'NOT_PROFILE_BOUND', releaseCount: 0 });
  });

  it('limits of the bound profile: projection, bytes, rate per principal per minute and the bulk cap', async () => {
    const rita = await token('rita', 'runtime export audit');
    const t = await sealedCall('tight-app', 'x-tight', rita);
    const structured = await exportOf(t, 'op-tight-structured', 'structured', rita);
    expect(structured.status).toBe(403);
    expect(structured.body.error.details.reason).toBe('PROJECTION_NOT_ALLOWED');
    // Denied is final: the retry is answered from its row (EXPORT_DENIED), before the check that would deny it again.
    const retried = await exportOf(t, 'op-tight-structured', 'structured', rita);
    expect(retried.status).toBe(400);
    expect(retried.body.error.details).toMatchObject({ reason: 'EXPORT_DENIED', deniedFor: 'PROJECTION_NOT_ALLOWED' });
    expect((await exportOf(t, 'op-tight-1', 'content', rita)).status).toBe(200);
    expect((await exportOf(t, 'op-tight-2', 'content', rita)).status).toBe(200);
    const bulk = await exportOf(t, 'op-tight-3', 'content', rita);
    expect(bulk.status).toBe(429);
    expect(bulk.body.error.details.reason).toBe('BULK_CAP_REACHED');
    const t2 = await sealedCall('tight-app', 'x-tight-2', rita);
    const rate = await exportOf(t2, 'op-tight-4', 'content', rita);
    expect(rate.status).toBe(429);
    expect(rate.body.error.details.reason).toBe('RATE_LIMITED');
    expect(rate.text).not.toContain(t2.nonce);

    const big = await sealedCall('small-app', 'x-small');
    const tooLarge = await exportOf(big, 'op-small', 'content');
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.details.reason).toBe('EXPORT_TOO_LARGE');
    expect(tooLarge.text).not.toContain(big.nonce);
  });

  it('audit-store outage: denied 503 AUDIT_UNAVAILABLE and the body holds no result bytes', async () => {
    const t = await sealedCall('nonce-app', 'x-outage');
    faults.arm('export.inside-audit-append', () => {
      throw new Error('connection to the audit store lost');
    });
    const res = await exportOf(t, 'op-outage');
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'AUDIT_UNAVAILABLE' } });
    expect(res.text).not.toContain(t.nonce);
    expect(res.body).not.toHaveProperty('result');
  });

  it('crash before the audit append: no row, nothing released; the retry completes', async () => {
    const t = await sealedCall('nonce-app', 'x-crash-before');
    faults.arm('export.before-audit-append');
    const crashed = await exportOf(t, 'op-crash-before');
    expect(crashed.status).toBe(500);
    expect(crashed.text).not.toContain(t.nonce);
    expect(await rows('nonce-app', 'x-crash-before')).toEqual([]);
    const retry = await exportOf(t, 'op-crash-before');
    expect(retry.body).toMatchObject({ status: 'released', releaseCount: 1 });
  });

  it('crash after the audit append, before release: the row is authorized, nothing released; the retry completes', async () => {
    const t = await sealedCall('nonce-app', 'x-crash-after');
    faults.arm('export.after-audit-append');
    const crashed = await exportOf(t, 'op-crash-after');
    expect(crashed.status).toBe(500);
    expect(crashed.text).not.toContain(t.nonce);
    expect(await rows('nonce-app', 'x-crash-after')).toMatchObject([{ status: 'authorized', releaseCount: 0, bytes: expect.any(Number) }]);
    const retry = await exportOf(t, 'op-crash-after');
    expect(retry.body).toMatchObject({ status: 'released', releaseCount: 1 });
    expect(await rows('nonce-app', 'x-crash-after')).toMatchObject([{ status: 'released', releaseCount: 1 }]);
  });

  it('audit success followed by a transport failure (crash after release): the row is released, a retry records the extra release', async () => {
    const t = await sealedCall('nonce-app', 'x-crash-release');
    faults.arm('export.after-release');
    const crashed = await exportOf(t, 'op-crash-release');
    expect(crashed.status).toBe(500);
    expect(crashed.text).not.toContain(t.nonce);
    expect(await rows('nonce-app', 'x-crash-release')).toMatchObject([{ status: 'released', releaseCount: 1 }]);
    const retry = await exportOf(t, 'op-crash-release');
    expect(retry.body).toMatchObject({ status: 'released', releaseCount: 2 });
  });

  it('duplicate concurrent retries of one operation id produce one row', async () => {
    const t = await sealedCall('nonce-app', 'x-dup');
    const results = await Promise.all(Array.from({ length: 4 }, () => exportOf(t, 'op-dup')));
    for (const r of results) expect(r.status).toBe(200);
    expect(new Set(results.map((r) => r.body.exportId)).size).toBe(1);
    const audit = await rows('nonce-app', 'x-dup');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ status: 'released', releaseCount: 4 });
  });

  it('a profile pinning the export-audit store binds PROFILE_BOUND only when the store answers with that namespace and revision', async () => {
    const described = await services.exportAudit.client.request(ExportAuditDescribe, {});
    const store = described.stores.find((s) => s.kind === 'postgres')!;
    expect(store).toMatchObject({ ready: true, namespace: expect.any(String), revision: '1' });
    const pinned = (revision: string): HostProfile => {
      const base = profile();
      return { ...base, providers: { ...base.providers, exportAuditStore: { service: 'export-audit', namespace: store.namespace, revision } } };
    };
    const registry = services.registry.client;
    await registry.request(RegistryPutProfile, { profileId: 'p-pinned', profile: pinned('1') });
    await registry.request(RegistryPutProfile, { profileId: 'p-pinned-other', profile: pinned('2') });
    const bound = await registry.request(RegistryPutToolset, { toolsetId: 'pinned', spec: fixtureSpec('stateful-nonce', 'p-pinned') }, { timeoutMs: 30_000 });
    expect(bound.status.state).toBe('PROFILE_BOUND');
    const other = await registry.request(
      RegistryPutToolset,
      { toolsetId: 'pinned-other', spec: fixtureSpec('stateful-nonce', 'p-pinned-other') },
      { timeoutMs: 30_000 },
    );
    expect(other.status.state).toBe('MODEL_ONLY');
    expect(other.status.readiness.find((r) => r.provider === 'exportAuditStore')).toMatchObject({ present: false, reason: 'REVISION_MISMATCH' });
  });

  it('two export-audit replicas racing one operation id produce one row', async () => {
    const replica = await bootService(
      loadServiceDefinitions().find((d) => d.name === 'export-audit')!,
      prefix,
      {
        NATS_URL: nats.url,
        EXPORT_PURGE_INTERVAL_MS: '0',
        INSTANCE_ID: 'export-audit-replica',
      },
    );
    try {
      const t = await sealedCall('nonce-app', 'x-replicas');
      const results = await Promise.all(Array.from({ length: 8 }, () => exportOf(t, 'op-replicas')));
      for (const r of results) expect(r.status).toBe(200);
      expect(new Set(results.map((r) => r.body.exportId)).size).toBe(1);
      const audit = await rows('nonce-app', 'x-replicas');
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ status: 'released', releaseCount: 8 });
    } finally {
      await replica.stop();
    }
  });

  it('key rotation landing before release is denied; once the old key leaves its verify window, export is denied at load', async () => {
    const t = await sealedCall('nonce-app', 'x-rotate');
    const res = await landBeforeRelease(
      () => services.registry.client.request(RegistryRotateKeys, {}),
      () => exportOf(t, 'op-rotate'),
    );
    expect(res.status).toBe(400);
    expect(res.body.error.details.reason).toBe('BINDING_KEY_INVALID');
    expect(res.text).not.toContain(t.nonce);
    await new Promise((r) => setTimeout(r, VERIFY_WINDOW_MS + 500));
    const expired = await exportOf(t, 'op-rotate-expired');
    expect(expired.status).toBe(400);
    expect(expired.body.error.details.reason).toBe('BINDING_KEY_INVALID');
    expect(expired.text).not.toContain(t.nonce);
    expect((await rows('nonce-app', 'x-rotate')).map((r) => [r.operationId, r.status])).toEqual([
      ['op-rotate', 'denied'],
      ['op-rotate-expired', 'denied'],
    ]);
  });
});
