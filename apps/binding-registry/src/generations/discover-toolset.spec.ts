import {
  ConnGenerationState,
  RegistryAcquireGeneration,
  RegistryDiscoverToolset,
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRevokeToolset,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { dropSchemasWithPrefix, expectAppError, type PrivateNats, startFakeProviders, startPrivateNats, uniquePrefix } from '@apphost/testing';
import { alice, bootRegistry, fixtureSpec, profile, PROVIDER_FAKES, type RegistryUnderTest, session } from '../test/registry-harness';

/**
 * `discover-toolset`: what catalog discovery spent six requests on (get-toolset, then acquire, list and release per
 * class), in one; two replicas, so a generation owned by the other replica is listed on its owner's subject.
 */
const prefix = uniquePrefix();
let nats: PrivateNats;
let a: RegistryUnderTest;
let b: RegistryUnderTest;
let providers: { stop(): Promise<void> };

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  a = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'registry-a' });
  b = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'registry-b' });
  await a.client.request(RegistryPutProfile, { profileId: 'two', profile: profile() });
  await a.client.request(RegistryPutProfile, {
    profileId: 'quiet',
    profile: { ...profile(), callbackPolicy: { sampling: 'deny', elicitation: 'deny', roots: 'deny' } },
  });
  await a.client.request(RegistryPutToolset, {
    toolsetId: 'nonce-two',
    spec: { ...fixtureSpec('stateful-nonce', 'two'), requireConfirmation: ['start-session'] },
  });
  await a.client.request(RegistryPutToolset, { toolsetId: 'nonce-quiet', spec: fixtureSpec('stateful-nonce', 'quiet') });
  await a.client.request(RegistryPutToolset, { toolsetId: 'nonce-revoked', spec: fixtureSpec('stateful-nonce', 'two') });
}, 90_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

const discover = (via: RegistryUnderTest, toolsetId: string, sessionId: string) =>
  via.client.request(
    RegistryDiscoverToolset,
    { toolsetId, connectionClasses: ['app-safe', 'full'], principal: alice, session: session(sessionId), holder: { kind: 'runner', id: 'test' } },
    { timeoutMs: 30_000 },
  );

it('two connections: each class acquired and listed fresh, its reference released, the facts those of get-toolset', async () => {
  const found = await discover(a, 'nonce-two', 'd-two');
  expect(found.classes.map((c) => c.generation.connectionClass)).toEqual(['app-safe', 'full']);
  expect(found.classes[0].generation.generationId).not.toBe(found.classes[1].generation.generationId);
  expect(found.classes.map((c) => c.listing)).toEqual([0, 1]);
  for (const l of found.listings) expect(l.tools.map((t) => t.name)).toContain('start-session');
  const status = await a.client.request(RegistryGetToolset, { toolsetId: 'nonce-two' });
  const { liveConnections: _live, readiness: _readiness, transport: _transport, protocol: _protocol, ...facts } = status;
  expect(found.toolset).toEqual(facts);
  expect(found.toolset.requireConfirmation).toEqual(['start-session']);
  expect(found.classes[0].generation.bindingRevision).toBe(status.bindingRevision);
  // Nothing is held after the answer: both generations are evictable (references 0, nothing in flight).
  for (const { generation } of found.classes)
    expect(await requestOnGeneration(a.client, ConnGenerationState, generation, {})).toMatchObject({ references: 0, inflight: 0, evictable: true });
}, 60_000);

it('one connection for both classes (no callbacks granted): one generation, listed once', async () => {
  const found = await discover(a, 'nonce-quiet', 'd-quiet');
  expect(found.classes.map((c) => c.generation.connectionClass)).toEqual(['app-safe', 'full']);
  expect(found.classes[0].generation.generationId).toBe(found.classes[1].generation.generationId);
  expect(found.classes.map((c) => c.listing)).toEqual([0, 0]);
  expect(found.listings).toHaveLength(1);
}, 60_000);

it('a generation either replica owns is found again and listed on its owner, whichever replica serves the request', async () => {
  // Requests go to the registry's queue group, so which replica acquires and which serves a discovery is the bus's
  // choice: repeated discoveries land on both replicas (one of them not the owner), and each must find the same
  // generation, list it on its owner's subject and give its own reference back.
  const owned = await b.client.request(RegistryAcquireGeneration, {
    toolsetId: 'nonce-quiet',
    connectionClass: 'app-safe',
    principal: alice,
    session: session('d-remote'),
    holder: { kind: 'view', id: 'v-remote' },
  });
  expect(['registry-a', 'registry-b']).toContain(owned.ownerInstanceId);
  for (let i = 0; i < 6; i++) {
    const found = await discover(i % 2 === 0 ? a : b, 'nonce-quiet', 'd-remote');
    expect(found.classes[0].generation).toMatchObject({ generationId: owned.generationId, ownerInstanceId: owned.ownerInstanceId, fence: owned.fence });
    expect(found.listings[0].tools.map((t) => t.name)).toContain('start-session');
    // Its own reference went back; the View's stays.
    expect(await requestOnGeneration(a.client, ConnGenerationState, found.classes[0].generation, {})).toMatchObject({ references: 1 });
  }
}, 60_000);

it('a revoked binding fails the whole request, as an acquire would', async () => {
  await a.client.request(RegistryRevokeToolset, { toolsetId: 'nonce-revoked' });
  await expectAppError(discover(a, 'nonce-revoked', 'd-revoked'), 'FAILED_PRECONDITION', 'BINDING_CLOSED');
  await expectAppError(discover(a, 'no-such-toolset', 'd-missing'), 'NOT_FOUND');
}, 60_000);
