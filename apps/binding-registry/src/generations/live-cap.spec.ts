import { AppHostError, RegistryAcquireGeneration, RegistryPutProfile, RegistryPutToolset, RegistryRevoke, type GenerationHandle } from '@apphost/contracts';
import { eventually } from '@apphost/testing';
import { alice, fixtureSpec, profile, session, registrySuite } from '../test/registry-harness';
import { metricSample, running, serverPid } from '../test/server-processes';

// One registry whose cap is 2 live generations; real stdio servers. Seconds, not minutes.
jest.setTimeout(30_000);

const suite = registrySuite({
  env: { INSTANCE_ID: 'capped', REGISTRY_MAX_LIVE_GENERATIONS: '2' },
  setup: async (registry) => {
    await registry.client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
    await registry.client.request(RegistryPutToolset, { toolsetId: 'nonce', spec: fixtureSpec('stateful-nonce', 'p') });
  },
});

const acquire = (sessionId: string): Promise<GenerationHandle> =>
  suite.registry.client.request(RegistryAcquireGeneration, {
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
    expect(await metricSample(suite.registry, ...REFUSED)).toBe(1);
    expect(await metricSample(suite.registry, 'apphost_registry_live_generations')).toBe(2);

    // Joining a generation that is already live starts no process, so the cap does not refuse it.
    const heldSession = outcomes.findIndex((o) => o.status === 'fulfilled');
    const joined = await acquire(`s${heldSession + 1}`);
    expect(joined.generationId).toBe(held[0].generationId);

    // Releasing one generation (here: its session deleted) frees its slot at once.
    const endedPid = await serverPid(suite.registry, held[0]);
    expect(await suite.registry.client.request(RegistryRevoke, { session: session(`s${heldSession + 1}`).key, incarnation: 1 })).toEqual({ ended: 1 });
    await eventually(async () => !running(endedPid), 5000);
    expect(await metricSample(suite.registry, 'apphost_registry_live_generations')).toBe(1);
    const again = await acquire('s4');
    expect(again.ownerInstanceId).toBe('capped');
    expect(await metricSample(suite.registry, 'apphost_registry_live_generations')).toBe(2);
    expect(await metricSample(suite.registry, ...REFUSED)).toBe(1);
  });
});
