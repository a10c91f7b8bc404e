import { randomUUID } from 'node:crypto';
import { BusClient } from '@apphost/bus';
import { RegistryPutProfile, RegistryPutToolset, toolsetSpecSchema } from '@apphost/contracts';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import { connectTestTransport, dropSchemasWithPrefix, type PrivateNats, startFakeProviders, startPrivateNats, uniquePrefix } from '@apphost/testing';
import type { RegistryFaultPoint } from '../registry.faults';
import { RegistryStoreAccess } from '../store/store-access';
import { bootRegistry, fixtureSpec, profile, PROVIDER_FAKES, queryRegistrySchema, type RegistryUnderTest } from '../test/registry-harness';
import { printed, type RegistryProcess, startRegistryProcess, stopRegistryProcess } from '../test/registry-process';
import { BindingService } from './binding.service';

/*
 * A construction holds a lease. A registry that dies while it constructs leaves the binding MATERIALIZING with a
 * lease that expires; the next attempt takes it over (one construction at a time, whoever wins the takeover), so no
 * binding stays MATERIALIZING for ever and a PUT after the crash materializes.
 */
jest.setTimeout(60_000);
const CONSTRUCTION_LEASE_MS = 1500;
/** How long a PUT waits for a construction another replica holds (`binding.service.ts`). */
const MATERIALIZE_WAIT_MS = 10_000;
const prefix = uniquePrefix();
let nats: PrivateNats;
let providers: { stop(): Promise<void> };
let child: RegistryProcess | undefined;
const registries: RegistryUnderTest[] = [];

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
});

afterAll(async () => {
  await stopRegistryProcess(child);
  for (const r of registries) await r.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

const boot = async (instanceId: string) => {
  const registry = await bootRegistry(nats.url, prefix, { INSTANCE_ID: instanceId, REGISTRY_CONSTRUCTION_LEASE_MS: String(CONSTRUCTION_LEASE_MS) });
  registries.push(registry);
  return registry;
};
const bindingRow = async (toolsetId: string) =>
  (
    await queryRegistrySchema<{ state: string; constructions: number; construction_attempts: number }>(
      prefix,
      'SELECT state, constructions, construction_attempts FROM bindings WHERE toolset_id = $1 AND generation = 1',
      [toolsetId],
    )
  )[0];

it('a registry SIGKILLed mid-construction leaves an expiring lease: the next PUT takes it over and materializes', async () => {
  // The only registry on the bus is the doomed one, so it serves the PUT and holds inside the construction.
  child = await startRegistryProcess(nats.url, prefix, 'registry-doomed', {
    REGISTRY_CHILD_HOLD_AT: 'binding.after-begin-materialize',
    REGISTRY_CONSTRUCTION_LEASE_MS: String(CONSTRUCTION_LEASE_MS),
  });
  const transport = await connectTestTransport('construction-lease-client', { natsUrl: nats.url });
  const client = new BusClient({ transport, defaultTimeoutMs: 30_000 });
  try {
    await client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
    const spec = fixtureSpec('capability-gated', 'p');
    const wedged = client.request(RegistryPutToolset, { toolsetId: 'wedged', spec }, { timeoutMs: 5_000 }).catch((error: unknown) => error);
    await printed(child, 'FAULT_HELD binding.after-begin-materialize');
    await stopRegistryProcess(child, 'SIGKILL');
    expect(await bindingRow('wedged')).toMatchObject({ state: 'MATERIALIZING', constructions: 1, construction_attempts: 1 });

    const survivor = await boot('registry-survivor');
    const started = Date.now();
    const { status } = await survivor.client.request(RegistryPutToolset, { toolsetId: 'wedged', spec });
    expect(status).toMatchObject({ state: 'PROFILE_BOUND', bindingGeneration: 1 });
    // Within the PUT's 10 s materialization wait: at most the rest of the dead constructor's lease, then one
    // construction (a fixture server started from TypeScript sources, seconds on a loaded machine) — never a wedge.
    expect(Date.now() - started).toBeLessThan(MATERIALIZE_WAIT_MS);
    expect(await bindingRow('wedged')).toMatchObject({ state: 'PROFILE_BOUND', constructions: 1, construction_attempts: 2 });
    // The PUT the dead registry was serving never got an answer.
    expect(await wedged).toMatchObject({ code: 'OUTCOME_UNKNOWN' });
  } finally {
    await transport.close();
  }
});

it('two replicas finding the same expired lease: exactly one of them constructs, both get its binding', async () => {
  const a = await boot('registry-a');
  const b = await boot('registry-b');
  const store = a.running.app.get(RegistryStoreAccess);
  await a.client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
  // A constructor that died at once: the binding is MATERIALIZING under a lease that has already expired.
  await store.toolsets.put('contended', toolsetSpecSchema.parse(fixtureSpec('capability-gated', 'p')), 'digest-contended');
  expect(await store.toolsets.beginMaterialize('contended', 1, randomUUID(), 0)).toBe(true);

  let constructions = 0;
  for (const registry of [a, b]) {
    // Held for a moment, so the loser's attempt certainly runs while the winner is still constructing.
    registry.running.app.get<FaultPoints<RegistryFaultPoint>>(FAULT_POINTS).arm('binding.after-begin-materialize', async () => {
      constructions++;
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
  }
  const results = await Promise.all([a, b].map((r) => r.running.app.get(BindingService).materialized('contended')));
  expect(constructions).toBe(1);
  for (const { binding } of results) expect(binding).toMatchObject({ state: 'PROFILE_BOUND', constructions: 1, constructionAttempts: 2 });
  expect(new Set(results.map(({ binding }) => binding.bindingRevision)).size).toBe(1);
  for (const registry of [a, b]) registry.running.app.get<FaultPoints<RegistryFaultPoint>>(FAULT_POINTS).disarm();
});
