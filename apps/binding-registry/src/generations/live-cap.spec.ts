import { AppHostError, RegistryAcquireGeneration, RegistryPutProfile, RegistryPutToolset, RegistryRevoke, type GenerationHandle } from '@apphost/contracts';
import { dropSchemasWithPrefix, eventually, type PrivateNats, startFakeProviders, startPrivateNats, uniquePrefix } from '@apphost/testing';
import { alice, bootRegistry, fixtureSpec, profile, PROVIDER_FAKES, type RegistryUnderTest, session } from '../test/registry-harness';
import { metricSample, running, serverPid } from '../test/server-processes';

// One registry whose cap is 2 live generations; real stdio servers. Seconds, not minutes.
jest.setTimeout(30_000);

const prefix = uniquePrefix();
let nats: PrivateNats;
let registry: RegistryUnderTest;
let providers: { stop(): Promise<void> };

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  registry = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'capped', REGISTRY_MAX_LIVE_GENERATIONS: '2' });
  await registry.client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
  await registry.client.request(RegistryPutToolset, { toolsetId: 'nonce', spec: fixtureSpec('stateful-nonce', 'p') });
}, 60_000);

afterAll(async () => {
  await registry?.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

const acquire = (sessionId: string): Promise<GenerationHandle> =>
  registry.client.request(RegistryAcquireGeneration, {
    toolsetId: 'nonce',
    connectionClass: 'app-safe',
    principal: alice,
    session: session(sessionId),
    holder: { kind: 'view', id: `v-${Math.random()}` },
  });
const REFUSED = ['apphost_registry_acquire_refusals_total', 'reason="LIVE_GENERATIONS_EXHAUSTED"'] as const;

describe('the per-instance cap on live generations', () => {
  it('at the cap a new generation is refused RESOURCE_EXHAUSTED (typed, retryable, counted); after one ends, acquiring works again', async () => {
    // Three claims at once: the cap holds under concurrency (slots are taken before the claim, not after the open).
    const outcomes = await Promise.allSettled(['s1', 's2', 's3'].map(acquire));
    const held = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    expect(held).toHaveLength(2);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(AppHostError);
    expect(refused[0]).toMatchObject({ code: 'RESOURCE_EXHAUSTED', retryable: true, details: { reason: 'LIVE_GENERATIONS_EXHAUSTED', limit: 2 } });
    expect(await metricSample(registry, ...REFUSED)).toBe(1);
    expect(await metricSample(registry, 'apphost_registry_live_generations')).toBe(2);

    // Joining a generation that is already live starts no process, so the cap does not refuse it.
    const heldSession = outcomes.findIndex((o) => o.status === 'fulfilled');
    const joined = await acquire(`s${heldSession + 1}`);
    expect(joined.generationId).toBe(held[0].generationId);

    // Releasing one generation (here: its session deleted) frees its slot at once.
    const endedPid = await serverPid(registry, held[0]);
    expect(await registry.client.request(RegistryRevoke, { session: session(`s${heldSession + 1}`).key, incarnation: 1 })).toEqual({ ended: 1 });
    await eventually(async () => !running(endedPid), 5000);
    expect(await metricSample(registry, 'apphost_registry_live_generations')).toBe(1);
    const again = await acquire('s4');
    expect(again.ownerInstanceId).toBe('capped');
    expect(await metricSample(registry, 'apphost_registry_live_generations')).toBe(2);
    expect(await metricSample(registry, ...REFUSED)).toBe(1);
  });
});
