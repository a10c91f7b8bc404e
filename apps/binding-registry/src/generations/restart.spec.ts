import { BusClient, type NatsTransport } from '@apphost/bus';
import { ConnCallTool, RegistryAcquireGeneration, RegistryPutProfile, RegistryPutToolset, type GenerationHandle } from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import {
  connectTestTransport,
  dropSchemasWithPrefix,
  expectAppError,
  type PrivateNats,
  startFakeProviders,
  startPrivateNats,
  uniquePrefix,
} from '@apphost/testing';
import { alice, fixtureSpec, profile, PROVIDER_FAKES, queryRegistrySchema, session } from '../test/registry-harness';
import { type RegistryProcess, startRegistryProcess, stopRegistryProcess } from '../test/registry-process';

/*
 * A restart is usable at once. The registry runs as a real process; it is stopped (SIGTERM) or killed (SIGKILL)
 * while it owns a session's generation, and a new registry process (another instance id, as a new pod gets) starts.
 * The first acquire for that session gets a new generation on the new registry, and the first call on it works:
 * nobody waits for the old owner's lease (30 s here) to lapse. The old handle stays dead (no migration).
 */
jest.setTimeout(90_000);
const LEASE_MS = '30000';
/**
 * "At once": well inside the old owner's lease, which is what a restart must not wait out. The time covers an acquire
 * that starts the fixture server (from TypeScript sources: seconds on a loaded machine) and one call on it.
 */
const AT_ONCE_MS = Number(LEASE_MS) / 3;
const prefix = uniquePrefix();
let nats: PrivateNats;
let providers: { stop(): Promise<void> };
let transport: NatsTransport;
let client: BusClient;
let running: RegistryProcess | undefined;

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  transport = await connectTestTransport('restart-client', { natsUrl: nats.url });
  client = new BusClient({ transport, defaultTimeoutMs: 20_000 });
});

afterAll(async () => {
  await stopRegistryProcess(running);
  await transport?.close();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

const start = async (instanceId: string, env: Record<string, string> = {}) =>
  (running = await startRegistryProcess(nats.url, prefix, instanceId, { REGISTRY_INSTANCE_LEASE_MS: LEASE_MS, ...env }));
const acquire = (): Promise<GenerationHandle> =>
  client.request(RegistryAcquireGeneration, {
    toolsetId: 'nonce',
    connectionClass: 'app-safe',
    principal: alice,
    session: session('restarted'),
    holder: { kind: 'operation', id: `op-${Math.random()}` },
  });
async function call(handle: GenerationHandle, name: string, args: Record<string, unknown> = {}) {
  const out = await requestOnGeneration(client, ConnCallTool, handle, { callId: `c-${Math.random()}`, name, arguments: args });
  if (out.kind !== 'complete') throw new Error('unexpected input round');
  return out.result as { isError?: boolean; structuredContent?: Record<string, unknown> };
}
const row = async (generationId: string) =>
  (
    await queryRegistrySchema<{ state: string; close_reason: string }>(
      prefix,
      'SELECT state, close_reason FROM connection_generations WHERE generation_id = $1',
      [generationId],
    )
  )[0];

/**
 * Restarts the registry with `signal` (without waiting for the old process to exit when `overlap`); returns the
 * first handle after the restart and how long after the new registry was ready a call on it worked.
 */
async function restart(
  previous: GenerationHandle,
  signal: NodeJS.Signals,
  next: string,
  overlap = false,
): Promise<{ handle: GenerationHandle; usableAfterMs: number }> {
  const old = running;
  if (overlap) old?.kill(signal);
  else await stopRegistryProcess(old, signal);
  await start(next);
  const ready = Date.now();
  const handle = await acquire();
  expect((await call(handle, 'whoami')).isError).toBeFalsy();
  const usableAfterMs = Date.now() - ready;
  expect(handle).toMatchObject({ ownerInstanceId: next });
  expect(handle.generationId).not.toBe(previous.generationId);
  expect(handle.fence).toBeGreaterThan(previous.fence);
  expect(await expectAppError(call(previous, 'whoami'))).toMatchObject({ details: { reason: 'CONNECTION_GENERATION_GONE' } });
  if (overlap) await stopRegistryProcess(old, 'SIGKILL');
  return { handle, usableAfterMs };
}

it('SIGTERM while a call drains, then a new registry: the first acquire and call work at once, the stop records its generations', async () => {
  // The production drain: up to 10 s for in-flight handlers, with the registry's subjects already unsubscribed.
  await start('registry-1', { SHUTDOWN_GRACE_MS: '10000' });
  await client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
  await client.request(RegistryPutToolset, { toolsetId: 'nonce', spec: fixtureSpec('stateful-nonce', 'p') });
  const first = await acquire();
  expect((await call(first, 'start-session')).isError).toBeFalsy();
  // A long call keeps the stopping registry draining (its subjects are gone, its rows not yet closed).
  const draining = call(first, 'slow', { ms: 6000 }).catch((error: unknown) => error);
  await new Promise((resolve) => setTimeout(resolve, 200));

  const { usableAfterMs } = await restart(first, 'SIGTERM', 'registry-2', true);
  expect(usableAfterMs).toBeLessThan(AT_ONCE_MS);
  expect(await row(first.generationId)).toMatchObject({ state: expect.stringMatching(/^(CLOSED|GONE)$/) });
  await draining;
});

it('SIGTERM when idle: the stop records its generations CLOSED, the first acquire and call work at once', async () => {
  const before = await acquire();
  expect(before.ownerInstanceId).toBe('registry-2');
  const { usableAfterMs } = await restart(before, 'SIGTERM', 'registry-2b');
  expect(await row(before.generationId)).toMatchObject({ state: 'CLOSED', close_reason: 'OWNER_STOPPED' });
  expect(usableAfterMs).toBeLessThan(AT_ONCE_MS);
});

it('SIGKILL, then a new registry: the dead owner is found unreachable, the first acquire and call work at once', async () => {
  const before = await acquire();
  expect(before.ownerInstanceId).toBe('registry-2b');
  const { usableAfterMs } = await restart(before, 'SIGKILL', 'registry-3');
  expect(await row(before.generationId)).toMatchObject({ state: 'GONE' });
  expect(usableAfterMs).toBeLessThan(AT_ONCE_MS);
  // The dead owner's lease was ended when its subject had no responders: it does not count as alive any more.
  const [dead] = await queryRegistrySchema<{ expired: boolean }>(
    prefix,
    `SELECT lease_expires_at <= now() AS expired FROM registry_instances WHERE instance_id = 'registry-2b'`,
  );
  expect(dead).toEqual({ expired: true });
});

it('SIGKILL, then the same instance id again: its previous incarnation is over, the first acquire and call work at once', async () => {
  const before = await acquire();
  expect(before.ownerInstanceId).toBe('registry-3');
  const { usableAfterMs } = await restart(before, 'SIGKILL', 'registry-3');
  expect(await row(before.generationId)).toMatchObject({ state: 'GONE', close_reason: 'OWNER_RESTARTED' });
  expect(usableAfterMs).toBeLessThan(AT_ONCE_MS);
});
