import {
  ConnCallTool,
  ConnListTools,
  ConnPing,
  ConnRelease,
  RegistryAcquireGeneration,
  RegistryPutProfile,
  RegistryPutToolset,
  type GenerationHandle,
  type Principal,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { dropSchemasWithPrefix, expectAppError, type PrivateNats, startFakeProviders, startPrivateNats, uniquePrefix } from '@apphost/testing';
import { alice, bob, bootRegistry, fixtureSpec, profile, PROVIDER_FAKES, type RegistryUnderTest, session } from '../test/registry-harness';

const prefix = uniquePrefix();
let nats: PrivateNats;
let a: RegistryUnderTest;
let b: RegistryUnderTest;
let providers: { stop(): Promise<void> };

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  // Two registry replicas: separate NATS connections, separate instance ids, one shared schema.
  a = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'registry-a' });
  b = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'registry-b' });
  await a.client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
  await a.client.request(RegistryPutProfile, { profileId: 'shared', profile: profile({}, { affinity: 'per-principal' }) });
  await a.client.request(RegistryPutToolset, { toolsetId: 'nonce', spec: fixtureSpec('stateful-nonce', 'p') });
  await a.client.request(RegistryPutToolset, { toolsetId: 'nonce-shared', spec: fixtureSpec('stateful-nonce', 'shared') });
  await a.client.request(RegistryPutToolset, { toolsetId: 'endless', spec: fixtureSpec('hostile', 'p', ['--mode=endless']) });
  await a.client.request(RegistryPutToolset, { toolsetId: 'repeat', spec: fixtureSpec('hostile', 'p', ['--mode=repeat-cursor']) });
  await a.client.request(RegistryPutToolset, { toolsetId: 'oversized', spec: fixtureSpec('hostile', 'p', ['--mode=oversized']) });
  await a.client.request(RegistryPutToolset, { toolsetId: 'slow', spec: fixtureSpec('hostile', 'p', ['--mode=slow']) });
  await a.client.request(RegistryPutToolset, { toolsetId: 'modern-hostile', spec: fixtureSpec('hostile', 'p', [], '2026-07-28') });
}, 90_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

async function acquire(via: RegistryUnderTest, toolsetId: string, principal: Principal = alice, sessionId = 's1', incarnation = 1): Promise<GenerationHandle> {
  return via.client.request(RegistryAcquireGeneration, {
    toolsetId,
    connectionClass: 'app-safe',
    principal,
    session: session(sessionId, incarnation),
    holder: { kind: 'view', id: `v-${Math.random()}` },
  });
}
async function call(via: RegistryUnderTest, handle: GenerationHandle, name: string, args: Record<string, unknown> = {}) {
  const out = await requestOnGeneration(via.client, ConnCallTool, handle, { callId: `c-${Math.random()}`, name, arguments: args });
  if (out.kind !== 'complete') throw new Error('unexpected input round');
  return out.result as { isError?: boolean; structuredContent?: Record<string, unknown> };
}
const startSession = async (via: RegistryUnderTest, handle: GenerationHandle) =>
  (await call(via, handle, 'start-session')).structuredContent!['nonce'] as string;

describe('security-domain and session keying', () => {
  it('two principals get their own generation; the nonce one writes is invisible to the other', async () => {
    const ha = await acquire(a, 'nonce', alice, 'shared-id');
    const hb = await acquire(a, 'nonce', bob, 'shared-id');
    expect(ha.generationId).not.toBe(hb.generationId);
    const nonce = await startSession(a, ha);
    expect((await call(a, ha, 'follow-up', { nonce })).isError).toBeFalsy();
    expect((await call(a, hb, 'follow-up', { nonce })).isError).toBe(true);
  }, 60_000);

  it('two sessions of one principal are isolated by default; the same session shares its generation', async () => {
    const s1 = await acquire(a, 'nonce', alice, 'iso-1');
    const s2 = await acquire(a, 'nonce', alice, 'iso-2');
    const again = await acquire(a, 'nonce', alice, 'iso-1');
    expect(s1.generationId).not.toBe(s2.generationId);
    expect(again.generationId).toBe(s1.generationId);
    const nonce = await startSession(a, s1);
    expect((await call(a, again, 'follow-up', { nonce })).isError).toBeFalsy();
    expect((await call(a, s2, 'follow-up', { nonce })).isError).toBe(true);
    const newIncarnation = await acquire(a, 'nonce', alice, 'iso-1', 2);
    expect(newIncarnation.generationId).not.toBe(s1.generationId);
  }, 60_000);

  it('per-principal affinity (profile opt-in) shares one generation across sessions of a principal, never across principals', async () => {
    const x = await acquire(a, 'nonce-shared', alice, 'one');
    const y = await acquire(a, 'nonce-shared', alice, 'two');
    const z = await acquire(a, 'nonce-shared', bob, 'one');
    expect(y.generationId).toBe(x.generationId);
    expect(z.generationId).not.toBe(x.generationId);
  }, 60_000);
});

describe('two registry processes', () => {
  it('every call for a generation lands on its owner, whichever replica the caller reached', async () => {
    const first = await acquire(b, 'nonce', alice, 'two-proc');
    expect(['registry-a', 'registry-b']).toContain(first.ownerInstanceId);
    // Acquire is served by whichever replica the queue group picks; every answer names the one owner.
    const again = await Promise.all(Array.from({ length: 6 }, (_, i) => acquire(i % 2 ? a : b, 'nonce', alice, 'two-proc')));
    for (const h of again) expect(h).toMatchObject({ generationId: first.generationId, ownerInstanceId: first.ownerInstanceId, fence: first.fence });
    const second = again[1];
    const nonce = await startSession(a, second);
    for (let i = 0; i < 5; i++) {
      const via = i % 2 ? a : b;
      expect((await call(via, i % 2 ? second : first, 'follow-up', { nonce })).isError).toBeFalsy();
    }
    const pids = await Promise.all([a, b].map(async (via) => (await requestOnGeneration(via.client, ConnPing, first, {})).pid));
    expect(pids[0]).toBe(pids[1]);
  }, 60_000);

  it('a stale fence is refused by the owner', async () => {
    const handle = await acquire(a, 'nonce', alice, 'fenced');
    const stale = { ...handle, fence: handle.fence + 1000 };
    expect((await expectAppError(requestOnGeneration(a.client, ConnPing, stale, {}))).details).toMatchObject({
      reason: 'CONNECTION_GENERATION_GONE',
      why: 'FENCE_MISMATCH',
    });
  }, 60_000);

  it('kill the owner: typed invalidation, no silent migration; a new acquire gets a new generation elsewhere', async () => {
    const owner = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'registry-c' });
    let handle: GenerationHandle;
    try {
      // Acquire lands on a random replica: retry with fresh sessions until registry-c claimed one.
      let attempt = 0;
      do handle = await acquire(owner, 'nonce', alice, `doomed-${++attempt}`);
      while (handle.ownerInstanceId !== 'registry-c' && attempt < 40);
      expect(handle.ownerInstanceId).toBe('registry-c');
      const nonce = await startSession(a, handle);
      expect((await call(a, handle, 'follow-up', { nonce })).isError).toBeFalsy();
      await owner.stop();
      const gone = await expectAppError(call(a, handle, 'follow-up', { nonce }));
      expect(gone).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'CONNECTION_GENERATION_GONE' } });
      const replacement = await acquire(a, 'nonce', alice, `doomed-${attempt}`);
      expect(replacement.generationId).not.toBe(handle.generationId);
      expect(['registry-a', 'registry-b']).toContain(replacement.ownerInstanceId);
      expect(replacement.fence).toBeGreaterThan(handle.fence);
      expect((await call(a, replacement, 'follow-up', { nonce })).isError).toBe(true);
    } finally {
      await owner.stop();
    }
  }, 60_000);
});

describe('bounded discovery through the registry', () => {
  it.each([
    ['endless', 'DISCOVERY_TOO_MANY_PAGES'],
    ['repeat', 'DISCOVERY_REPEATED_CURSOR'],
    ['oversized', 'DISCOVERY_TOO_MANY_BYTES'],
    ['slow', 'DISCOVERY_TIMEOUT'],
  ])(
    '%s → denied with %s, no partial catalog',
    async (toolsetId, reason) => {
      const handle = await acquire(a, toolsetId);
      const error = await expectAppError(requestOnGeneration(a.client, ConnListTools, handle, {}));
      expect(error.details?.['reason']).toBe(reason);
    },
    60_000,
  );
});

describe('app-safe input requests and references', () => {
  it('an app-safe call that receives an input-request round fails closed', async () => {
    const handle = await acquire(a, 'modern-hostile');
    const error = await expectAppError(call(a, handle, 'input-required'));
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_DENIED' } });
  }, 60_000);

  it('release is token-idempotent; the last release makes the generation evictable', async () => {
    const handle = await acquire(a, 'nonce', alice, 'refs');
    const other = await acquire(a, 'nonce', alice, 'refs');
    expect(await requestOnGeneration(a.client, ConnRelease, handle, { leaseId: handle.leaseId })).toEqual({ released: true, references: 1 });
    expect(await requestOnGeneration(a.client, ConnRelease, handle, { leaseId: handle.leaseId })).toEqual({ released: false, references: 1 });
    expect(await requestOnGeneration(a.client, ConnRelease, other, { leaseId: other.leaseId })).toEqual({ released: true, references: 0 });
  }, 60_000);
});
