import { ConnCallTool, ConnRelease, RegistryAcquireGeneration, RegistryPutProfile, RegistryPutToolset, type GenerationHandle } from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import {
  dropSchemasWithPrefix,
  eventually,
  expectAppError,
  type PrivateNats,
  startFakeProviders,
  startPrivateNats,
  TEST_DATABASE_URL,
  uniquePrefix,
  startTcpProxy,
  type TcpProxy,
} from '@apphost/testing';
import { alice, bootRegistry, fixtureSpec, profile, PROVIDER_FAKES, queryRegistrySchema, type RegistryUnderTest, session } from '../test/registry-harness';

/*
 * A registry that fenced itself recovers. Its link to PostgreSQL is cut for longer than its ownership lease: it
 * fences (ends its generations in memory) but cannot record it. When the link returns, the lapsed lease is not
 * renewed as if nothing happened: the registry registers a new incarnation, which ends the old one's directory rows,
 * so acquire-generation never hands out a dead generation and the session works again without a restart.
 */
jest.setTimeout(60_000);
const LEASE_MS = 1500;
const prefix = uniquePrefix();
let nats: PrivateNats;
let providers: { stop(): Promise<void> };
let link: TcpProxy;
let registry: RegistryUnderTest;

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  const target = new URL(TEST_DATABASE_URL);
  link = await startTcpProxy(target.hostname, Number(target.port || 5432));
  target.port = String(link.port);
  registry = await bootRegistry(nats.url, prefix, {
    INSTANCE_ID: 'registry-fenced',
    REGISTRY_INSTANCE_LEASE_MS: String(LEASE_MS),
    DATABASE_URL: target.toString(),
  });
  await registry.client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
  await registry.client.request(RegistryPutToolset, { toolsetId: 'nonce', spec: fixtureSpec('stateful-nonce', 'p') });
  await registry.client.request(RegistryPutProfile, { profileId: 'quick', profile: profile({}, { idleEvictMs: 100 }) });
  await registry.client.request(RegistryPutToolset, { toolsetId: 'evicted', spec: fixtureSpec('stateful-nonce', 'quick') });
});

afterAll(async () => {
  await registry?.stop();
  await link?.close();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

const acquire = (): Promise<GenerationHandle> =>
  registry.client.request(
    RegistryAcquireGeneration,
    { toolsetId: 'nonce', connectionClass: 'app-safe', principal: alice, session: session('fenced'), holder: { kind: 'operation', id: `op-${Math.random()}` } },
    { timeoutMs: 3000 },
  );
async function call(handle: GenerationHandle, name: string, args: Record<string, unknown> = {}) {
  const out = await requestOnGeneration(registry.client, ConnCallTool, handle, { callId: `c-${Math.random()}`, name, arguments: args }, { timeoutMs: 3000 });
  if (out.kind !== 'complete') throw new Error('unexpected input round');
  return out.result as { isError?: boolean; structuredContent?: Record<string, unknown> };
}
const incarnation = async () =>
  (await queryRegistrySchema<{ incarnation: string }>(prefix, `SELECT incarnation FROM registry_instances WHERE instance_id = 'registry-fenced'`))[0]
    ?.incarnation;

it('an end that PostgreSQL missed (a short outage) is retried until it is recorded', async () => {
  const handle = await registry.client.request(RegistryAcquireGeneration, {
    toolsetId: 'evicted',
    connectionClass: 'app-safe',
    principal: alice,
    session: session('short-outage'),
    holder: { kind: 'operation', id: 'op-short' },
  });
  const incarnationBefore = await incarnation();
  link.cut();
  // The last release starts idle eviction (100 ms): the generation ends while PostgreSQL is away.
  await requestOnGeneration(registry.client, ConnRelease, handle, { leaseId: handle.leaseId });
  await new Promise((resolve) => setTimeout(resolve, 400));
  link.resume();
  const state = () =>
    queryRegistrySchema<{ state: string; close_reason: string }>(prefix, 'SELECT state, close_reason FROM connection_generations WHERE generation_id = $1', [
      handle.generationId,
    ]);
  expect(await eventually(async () => ((await state())[0]?.state === 'LIVE' ? undefined : state()), 5_000)).toEqual([
    { state: 'CLOSED', close_reason: 'IDLE_EVICTED' },
  ]);
  // Recorded by the retry, within the same lease: the outage was shorter than the lease, so no new incarnation.
  expect(await incarnation()).toBe(incarnationBefore);
});

it('a PostgreSQL outage longer than the lease: fenced, then a new incarnation; acquire never returns the dead generation', async () => {
  const before = await acquire();
  const { nonce } = (await call(before, 'start-session')).structuredContent as { nonce: string };
  const incarnationBefore = await incarnation();

  link.cut();
  const cutAt = Date.now();
  // The lease lapses locally: the registry fences itself and refuses its own generation.
  const refused = await eventually(
    () => expectAppError(call(before, 'follow-up', { nonce })).then((e) => (e.details?.['reason'] === 'CONNECTION_GENERATION_GONE' ? e : undefined)),
    LEASE_MS * 3,
    100,
  );
  expect(refused.details).toMatchObject({ why: 'OWNERSHIP_LEASE_LAPSED' });
  // …and PostgreSQL stays away well past the lease, so nothing could be recorded meanwhile.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, cutAt + LEASE_MS * 2 - Date.now())));
  link.resume();

  const handed: string[] = [];
  const after = await eventually(
    async () => {
      const handle = await acquire();
      handed.push(handle.generationId);
      return (await call(handle, 'whoami')).isError ? undefined : handle;
    },
    LEASE_MS * 6,
    100,
  );
  expect(handed).not.toContain(before.generationId);
  expect(after.fence).toBeGreaterThan(before.fence);
  expect(after.ownerInstanceId).toBe('registry-fenced');
  // A new incarnation owns it; the old one's row was ended durably; the old connection's state is gone.
  expect(await incarnation()).not.toBe(incarnationBefore);
  const [old] = await queryRegistrySchema<{ state: string }>(prefix, 'SELECT state FROM connection_generations WHERE generation_id = $1', [
    before.generationId,
  ]);
  expect(old).toEqual({ state: 'GONE' });
  expect((await call(after, 'follow-up', { nonce })).isError).toBe(true);
  expect(await expectAppError(call(before, 'whoami'))).toMatchObject({ details: { reason: 'CONNECTION_GENERATION_GONE' } });
  // And it stays usable: the same session's next acquire is the same live generation.
  expect((await acquire()).generationId).toBe(after.generationId);
});
