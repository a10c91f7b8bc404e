import {
  ConnCallTool,
  ConnListTools,
  ConnPing,
  RegistryAcquireGeneration,
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  type GenerationHandle,
  type Principal,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import {
  dropSchemasWithPrefix,
  expectAppError,
  type HttpFixture,
  type PrivateNats,
  startFakeProviders,
  startHttpFixture,
  startPrivateNats,
  uniquePrefix,
} from '@apphost/testing';
import { alice, bob, bootRegistry, httpSpec, profile, PROVIDER_FAKES, queryRegistrySchema, type RegistryUnderTest, session } from '../test/registry-harness';

/*
 * Streamable HTTP toolsets end to end: fixture servers in their own processes on free 127.0.0.1 ports, a header
 * that must carry a configured secret (the fixture answers 401 otherwise), connections owned by the registry.
 */
const SECRET = `s3cret-${Math.random().toString(36).slice(2)}-value`;
const prefix = uniquePrefix();
let nats: PrivateNats;
let registry: RegistryUnderTest;
let providers: { stop(): Promise<void> };
let nonceServer: HttpFixture;
let gatedServer: HttpFixture;

beforeAll(async () => {
  nats = await startPrivateNats();
  [nonceServer, gatedServer] = await Promise.all([
    startHttpFixture('stateful-nonce', { requireHeader: { name: 'x-api-key', value: SECRET } }),
    startHttpFixture('capability-gated', { requireHeader: { name: 'x-api-key', value: SECRET } }),
  ]);
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  registry = await bootRegistry(nats.url, prefix, {
    INSTANCE_ID: 'registry-http',
    REGISTRY_ALLOW_STDIO: 'false',
    REGISTRY_SECRETS: JSON.stringify({ 'fixture-key': SECRET, 'stale-key': 'not-the-secret' }),
  });
  await registry.client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
  const key = { 'x-api-key': { secretRef: 'fixture-key' } };
  await registry.client.request(RegistryPutToolset, { toolsetId: 'http-nonce', spec: httpSpec(nonceServer.url, 'p', key) });
  await registry.client.request(RegistryPutToolset, { toolsetId: 'http-gated', spec: httpSpec(gatedServer.url, 'p', key) });
  await registry.client.request(RegistryPutToolset, {
    toolsetId: 'http-stale',
    spec: httpSpec(nonceServer.url, 'p', { 'x-api-key': { secretRef: 'stale-key' } }),
  });
}, 90_000);

afterAll(async () => {
  await registry?.stop();
  await providers?.stop();
  await Promise.all([nonceServer?.stop(), gatedServer?.stop()]);
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

async function acquire(
  toolsetId: string,
  principal: Principal = alice,
  sessionId = 's1',
  incarnation = 1,
  connectionClass: 'app-safe' | 'full' = 'app-safe',
): Promise<GenerationHandle> {
  return registry.client.request(RegistryAcquireGeneration, {
    toolsetId,
    connectionClass,
    principal,
    session: session(sessionId, incarnation),
    holder: { kind: 'view', id: `v-${Math.random()}` },
  });
}
async function call(handle: GenerationHandle, name: string, args: Record<string, unknown> = {}) {
  const out = await requestOnGeneration(registry.client, ConnCallTool, handle, { callId: `c-${Math.random()}`, name, arguments: args });
  if (out.kind !== 'complete') throw new Error('unexpected input round');
  return out.result as { isError?: boolean; structuredContent?: Record<string, unknown> };
}
const startSession = async (handle: GenerationHandle) => (await call(handle, 'start-session')).structuredContent as { nonce: string; connectionId: string };

describe('HTTP toolset specs and secrets', () => {
  it('header references resolve from configured secrets and are never stored or returned in clear', async () => {
    const status = await registry.client.request(RegistryGetToolset, { toolsetId: 'http-nonce' });
    expect(status).toMatchObject({ transport: 'http', state: 'PROFILE_BOUND' });
    expect(JSON.stringify(status)).not.toContain(SECRET);
    const rows = await queryRegistrySchema<{ row: string }>(prefix, `SELECT t::text AS row FROM toolsets t`);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows.some((r) => r.row.includes('fixture-key'))).toBe(true);
    for (const r of rows) expect(r.row).not.toContain(SECRET);
    // The server only answers with the secret header: a working call proves the reference was resolved and sent.
    const handle = await acquire('http-nonce', alice, 'secrets');
    expect((await call(handle, 'whoami')).structuredContent).toMatchObject({ transport: 'http', pid: nonceServer.pid });
  }, 60_000);

  it('a reference to a secret that is not configured is refused; a wrong secret value cannot connect', async () => {
    const missing = await expectAppError(
      registry.client.request(RegistryPutToolset, { toolsetId: 'http-missing', spec: httpSpec(nonceServer.url, 'p', { 'x-api-key': { secretRef: 'nope' } }) }),
    );
    expect(missing).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'SECRET_MISSING' } });
    const refused = await expectAppError(acquire('http-stale', alice, 'stale'));
    expect(refused).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'MCP_CONNECT_FAILED' } });
    expect(refused.message).not.toContain('not-the-secret');
  }, 60_000);

  it('a stdio spec is still refused when the deployment does not allow stdio', async () => {
    const error = await expectAppError(
      registry.client.request(RegistryPutToolset, {
        toolsetId: 'stdio-refused',
        spec: { connection: { kind: 'stdio', command: process.execPath, args: [] }, profileId: 'p' },
      }),
    );
    expect(error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'STDIO_NOT_ALLOWED' } });
  }, 30_000);
});

describe('HTTP connection generations', () => {
  it('two principals with identical HTTP headers get their own generations: the nonce one writes is invisible to the other', async () => {
    const ha = await acquire('http-nonce', alice, 'same-session');
    const hb = await acquire('http-nonce', bob, 'same-session');
    expect(ha.generationId).not.toBe(hb.generationId);
    const minted = await startSession(ha);
    expect((await call(ha, 'follow-up', { nonce: minted.nonce })).structuredContent).toMatchObject({ ok: true, connectionId: minted.connectionId });
    expect((await call(hb, 'follow-up', { nonce: minted.nonce })).isError).toBe(true);
    const seenByBob = (await call(hb, 'whoami')).structuredContent as { connectionId: string; nonce: string | null };
    expect(seenByBob.connectionId).not.toBe(minted.connectionId);
    expect(seenByBob.nonce).toBeNull();
    // One server process, two MCP sessions: the isolation is the registry's keying, not process boundaries.
    expect((await call(hb, 'whoami')).structuredContent).toMatchObject({ pid: nonceServer.pid });
    expect((await requestOnGeneration(registry.client, ConnPing, ha, {})).pid).toBeNull();
  }, 60_000);

  it('stateful HTTP is keyed by session incarnation: same incarnation shares the MCP session, a new incarnation does not', async () => {
    const first = await acquire('http-nonce', alice, 'incarnated', 1);
    const again = await acquire('http-nonce', alice, 'incarnated', 1);
    expect(again.generationId).toBe(first.generationId);
    const minted = await startSession(first);
    expect((await call(again, 'follow-up', { nonce: minted.nonce })).isError).toBeFalsy();
    const next = await acquire('http-nonce', alice, 'incarnated', 2);
    expect(next.generationId).not.toBe(first.generationId);
    expect(next.fence).toBeGreaterThan(first.fence);
    expect((await call(next, 'follow-up', { nonce: minted.nonce })).isError).toBe(true);
    const otherSession = await acquire('http-nonce', alice, 'incarnated-other', 1);
    expect((await call(otherSession, 'follow-up', { nonce: minted.nonce })).isError).toBe(true);
  }, 60_000);

  it('over HTTP too, only app-safe connections of a PROFILE_BOUND binding advertise the UI extension (seen on the wire)', async () => {
    const appSafe = await acquire('http-gated', alice, 'gated', 1, 'app-safe');
    const full = await acquire('http-gated', alice, 'gated', 1, 'full');
    expect(appSafe.advertisesUi).toBe(true);
    expect(full.advertisesUi).toBe(false);
    const widget = async (h: GenerationHandle) =>
      (await requestOnGeneration(registry.client, ConnListTools, h, {})).tools.find((t) => t.name === 'show-widget');
    expect((await widget(appSafe))?._meta).toMatchObject({ ui: { resourceUri: 'ui://capability-gated/widget.html' } });
    expect((await widget(full))?._meta).toBeUndefined();
    const observed = (await call(full, 'observed-capabilities')).structuredContent as { capabilities: Record<string, unknown>; ui: boolean };
    expect(observed.ui).toBe(false);
    expect(observed.capabilities).not.toHaveProperty('extensions');
  }, 60_000);
});
