import { RegistryPutProfile, RegistryPutToolset, type HostProfile, type RunToolBatchResponse } from '@apphost/contracts';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import { descriptors, dropSchemasWithPrefix, latch, startPrivateNats, uniquePrefix, type PrivateNats } from '@apphost/testing';
import { fixtureSpec, profile, token } from './catalog-harness';
import { bootExportPlane, type ExportPlane } from './exports-harness';

jest.setTimeout(120_000);

interface Reply {
  error?: { code: string; details: Record<string, unknown> };
  result?: unknown;
  exports: Array<Record<string, unknown>>;
  [key: string]: unknown;
}
type HttpReply = { status: number; text: string; body: Reply };
type ExportPolicy = NonNullable<HostProfile['export']>;

const WIDE: ExportPolicy = { projections: ['content', 'structured', 'full'], maxBytes: 64 * 1024, perPrincipalPerMinute: 1000, bulkCap: 1000 };

/**
 * The limit-shrink race at the recheck, on the real plane (gateway, lifecycle-store, sealed-result-store,
 * export-audit, binding-registry, catalog-policy, governed-operations on a private NATS; real PostgreSQL and Redis; a
 * real stdio MCP App server). Each export is held at export-audit's `export.before-recheck` point, after its row is
 * `authorized`; the toolset is rebound (`POST /v1/toolsets/{id}:rebind { profileId }`) to a profile whose export
 * policy the export no longer fits; then the export goes on. The recheck reads the profile the toolset names now, so
 * it denies with that limit's reason, the row ends `denied` with it, and no byte of the result is answered.
 */
describe('export: export limits that shrink between the authorized row and the release', () => {
  const prefix = uniquePrefix();
  let nats: PrivateNats;
  let plane: ExportPlane;
  let faults: FaultPoints;
  let admin: string;

  const http = async (method: string, url: string, bearer: string, body?: unknown): Promise<HttpReply> => {
    const res = await fetch(`${plane.base}${url}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Reply };
  };

  /** One UI call in a fresh session of `user`: its locator and the nonce only the sealed record holds. */
  const sealedCall = async (user: string, appName: string, sessionId: string) => {
    expect((await http('POST', '/v1/sessions', user, { appName, sessionId })).status).toBe(201);
    const res = await http('POST', `/v1/sessions/${sessionId}/tool-batches`, user, {
      appName,
      invocationId: 'inv',
      calls: [{ tool: 'start-session', arguments: {} }],
    });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    const [d] = descriptors(ev);
    const text = (ev.functionResponses[0].response.content as Array<{ text: string }>)[0].text;
    const nonce = (JSON.parse(text) as { nonce: string }).nonce;
    expect(nonce).toMatch(/^[0-9a-f-]{36}$/);
    return { appName, sessionId, eventId: ev.eventId, functionCallId: d.correlation.functionCallId, nonce };
  };
  const exportOf = (user: string, t: Awaited<ReturnType<typeof sealedCall>>, operationId: string, projection: string) =>
    http('POST', '/v1/exports', user, {
      appName: t.appName,
      sessionId: t.sessionId,
      eventId: t.eventId,
      functionCallId: t.functionCallId,
      operationId,
      projection,
    });
  const rows = async (user: string, appName: string, sessionId: string) => {
    const res = await http('GET', `/v1/exports?appName=${appName}&sessionId=${sessionId}`, user);
    expect(res.status).toBe(200);
    return res.body.exports;
  };
  const putProfile = (profileId: string, policy: ExportPolicy) =>
    plane.registry.client.request(RegistryPutProfile, { profileId, profile: { ...profile(), export: policy } });

  /** Holds the export at `export.before-recheck` (its row is `authorized` by then), rebinds the toolset, then lets it go on. */
  const rebindBeforeRecheck = async (toolsetId: string, profileId: string, exporting: () => Promise<HttpReply>, authorizedRow: () => Promise<unknown>) => {
    const hold = latch();
    faults.arm('export.before-recheck', hold.action);
    const pending = exporting();
    await hold.reached;
    expect(await authorizedRow()).toMatchObject({ status: 'authorized', releaseCount: 0 });
    const rebound = await http('POST', `/v1/toolsets/${toolsetId}:rebind`, admin, { profileId });
    expect(rebound.status).toBe(200);
    expect(rebound.body).toMatchObject({ profileId, state: 'PROFILE_BOUND', bindingGeneration: 2 });
    hold.release();
    return pending;
  };

  const CASES = [
    {
      name: 'the projection is no longer allowed',
      toolset: 'ts-projection',
      projection: 'structured',
      narrow: { ...WIDE, projections: ['content'] } as ExportPolicy,
      status: 403,
      reason: 'PROJECTION_NOT_ALLOWED',
      earlier: 0,
    },
    {
      name: 'the result is over the new maxBytes',
      toolset: 'ts-bytes',
      projection: 'full',
      narrow: { ...WIDE, maxBytes: 20 },
      status: 413,
      reason: 'EXPORT_TOO_LARGE',
      earlier: 0,
    },
    {
      name: 'the principal is over the new rate',
      toolset: 'ts-rate',
      projection: 'content',
      narrow: { ...WIDE, perPrincipalPerMinute: 1 },
      status: 429,
      reason: 'RATE_LIMITED',
      earlier: 1,
    },
    {
      name: 'the session is at the new bulk cap',
      toolset: 'ts-bulk',
      projection: 'content',
      narrow: { ...WIDE, bulkCap: 1 },
      status: 429,
      reason: 'BULK_CAP_REACHED',
      earlier: 1,
    },
  ] as const;

  beforeAll(async () => {
    nats = await startPrivateNats();
    const apps = Object.fromEntries([...CASES.map((c) => [`${c.toolset}-app`, c.toolset]), ['ts-same-app', 'ts-same']]);
    plane = await bootExportPlane(nats.url, prefix, apps);
    faults = plane.exportAudit.running.app.get(FAULT_POINTS);
    admin = await token('operator', 'admin');
    await putProfile('p-wide', WIDE);
    await putProfile('p-wide-again', { ...WIDE, maxBytes: WIDE.maxBytes - 1 });
    for (const c of CASES) await putProfile(`p-narrow-${c.toolset}`, c.narrow);
    for (const toolsetId of [...CASES.map((c) => c.toolset), 'ts-same']) {
      const put = await plane.registry.client.request(RegistryPutToolset, { toolsetId, spec: fixtureSpec('stateful-nonce', 'p-wide') }, { timeoutMs: 30_000 });
      expect(put.status).toMatchObject({ state: 'PROFILE_BOUND', bindingGeneration: 1 });
    }
  }, 180_000);

  afterAll(async () => {
    await plane?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  afterEach(() => faults.disarm());

  it.each(CASES)('denied at the recheck when $name: row denied with $reason, no bytes', async (c) => {
    // One principal per case: the rate window counts a principal's attempts across its sessions.
    const user = await token(`user-${c.toolset}`, 'runtime export audit');
    const appName = `${c.toolset}-app`;
    const t = await sealedCall(user, appName, `s-${c.toolset}`);
    // The rate and bulk cases start one release in: it fits the wide profile, and uses up the narrow one.
    for (let i = 0; i < c.earlier; i++) expect((await exportOf(user, t, `op-${c.toolset}-earlier-${i}`, c.projection)).status).toBe(200);

    const operationId = `op-${c.toolset}`;
    const res = await rebindBeforeRecheck(
      c.toolset,
      `p-narrow-${c.toolset}`,
      () => exportOf(user, t, operationId, c.projection),
      async () => (await rows(user, appName, t.sessionId)).find((r) => r.operationId === operationId),
    );
    expect(res.status).toBe(c.status);
    expect(res.body.error?.details.reason).toBe(c.reason);
    expect(res.body).not.toHaveProperty('result');
    expect(res.text).not.toContain(t.nonce);
    const row = (await rows(user, appName, t.sessionId)).find((r) => r.operationId === operationId);
    expect(row).toMatchObject({ status: 'denied', decision: 'deny', reason: c.reason, releaseCount: 0, releasedAt: null });
    // A denial is final: the same operation id releases nothing later either.
    const retry = await exportOf(user, t, operationId, c.projection);
    expect(retry.status).toBe(400);
    expect(retry.body.error?.details).toMatchObject({ reason: 'EXPORT_DENIED', deniedFor: c.reason });
    expect(retry.text).not.toContain(t.nonce);
  });

  it('a rebind to a profile the export still fits is denied as a binding change (the limits were not what denied)', async () => {
    const user = await token('user-same', 'runtime export audit');
    const t = await sealedCall(user, 'ts-same-app', 's-same');
    const res = await rebindBeforeRecheck(
      'ts-same',
      'p-wide-again',
      () => exportOf(user, t, 'op-same', 'full'),
      async () => (await rows(user, 'ts-same-app', 's-same')).find((r) => r.operationId === 'op-same'),
    );
    expect(res.status).toBe(400);
    expect(res.body.error?.details.reason).toBe('BINDING_CHANGED');
    expect(res.text).not.toContain(t.nonce);
    expect((await rows(user, 'ts-same-app', 's-same'))[0]).toMatchObject({ status: 'denied', reason: 'BINDING_CHANGED', releaseCount: 0 });
  });
});
