import { ConnCallTool, ConnPing, RegistryAcquireGeneration, RegistryPutProfile, RegistryPutToolset, type GenerationHandle } from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import {
  dropSchemasWithPrefix,
  eventually,
  expectAppError,
  type PrivateNats,
  spawnTs,
  startFakeProviders,
  startPrivateNats,
  TEST_DATABASE_URL,
  uniquePrefix,
  waitForExit,
} from '@apphost/testing';
import { alice, bootRegistry, fixtureSpec, profile, PROVIDER_FAKES, queryRegistrySchema, type RegistryUnderTest, session } from '../test/registry-harness';

/*
 * A crashed owner: a registry replica in its own process, SIGKILLed while it owns a generation (no graceful stop,
 * its rows stay LIVE, its lease just stops being renewed). Callers get CONNECTION_GENERATION_GONE at once. The next
 * acquire of the key finds nothing answering on the owner's subject: it ends that owner's lease and claims a new
 * generation with a higher fence elsewhere, without waiting for the lease to lapse. Nothing migrates: the old
 * handle stays dead and the old connection's state (the nonce) is lost.
 */
// Long enough that the waits below (the owner's subject gone, its stdio server exited, a new server started on a
// loaded machine) fit well inside it: the replacement must come before the lease would have lapsed.
const CHILD_LEASE_MS = 20_000;
const prefix = uniquePrefix();
let nats: PrivateNats;
let survivor: RegistryUnderTest;
let providers: { stop(): Promise<void> };
let child: ReturnType<typeof spawnTs> | undefined;

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  survivor = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'registry-survivor' });
  await survivor.client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
  await survivor.client.request(RegistryPutToolset, { toolsetId: 'nonce', spec: fixtureSpec('stateful-nonce', 'p') });
}, 90_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await waitForExit(child, 10_000).catch(() => undefined);
  }
  await survivor?.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

const acquire = (sessionId: string): Promise<GenerationHandle> =>
  survivor.client.request(RegistryAcquireGeneration, {
    toolsetId: 'nonce',
    connectionClass: 'app-safe',
    principal: alice,
    session: session(sessionId),
    holder: { kind: 'view', id: `v-${Math.random()}` },
  });
async function call(handle: GenerationHandle, name: string, args: Record<string, unknown> = {}) {
  const out = await requestOnGeneration(survivor.client, ConnCallTool, handle, { callId: `c-${Math.random()}`, name, arguments: args });
  if (out.kind !== 'complete') throw new Error('unexpected input round');
  return out.result as { isError?: boolean; structuredContent?: Record<string, unknown> };
}
const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('SIGKILL the owner: typed invalidation at once, then the next acquire claims a new generation with a higher fence at once', async () => {
  child = spawnTs('apps/binding-registry/src/test/registry-child.ts', {
    NATS_URL: nats.url,
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA_PREFIX: prefix,
    INSTANCE_ID: 'registry-doomed',
    REGISTRY_INSTANCE_LEASE_MS: String(CHILD_LEASE_MS),
  });
  const running = child;
  await eventually(
    async () => {
      if (running.exitCode !== null) throw new Error(`registry child exited: ${running.output().stderr}`);
      return running.output().stdout.includes('REGISTRY_READY registry-doomed') ? true : undefined;
    },
    60_000,
    100,
  );

  // Acquire is served by whichever replica the queue group picks: fresh sessions until the child claimed one.
  let handle: GenerationHandle;
  let attempt = 0;
  do handle = await acquire(`crash-${++attempt}`);
  while (handle.ownerInstanceId !== 'registry-doomed' && attempt < 60);
  expect(handle.ownerInstanceId).toBe('registry-doomed');
  const sessionId = `crash-${attempt}`;
  const { nonce } = (await call(handle, 'start-session')).structuredContent as { nonce: string };
  expect((await call(handle, 'follow-up', { nonce })).isError).toBeFalsy();
  const mcpPid = (await requestOnGeneration(survivor.client, ConnPing, handle, {})).pid as number;
  expect(processAlive(mcpPid)).toBe(true);

  running.kill('SIGKILL');
  expect((await waitForExit(running, 10_000)).signal).toBe('SIGKILL');
  const killedAt = Date.now();
  // The process is gone once the NATS server has read the closed socket and dropped its subscriptions (a moment
  // after exit): from then on no request can reach the dead owner, and a ping says so without waiting out a timeout.
  await eventually(
    () =>
      requestOnGeneration(survivor.client, ConnPing, handle, {}, { timeoutMs: 500 }).then(
        () => undefined,
        (error: unknown) => ((error as { details?: { reason?: string } }).details?.reason === 'CONNECTION_GENERATION_GONE' ? true : undefined),
      ),
    5_000,
    50,
  );

  // Every caller of the old handle: typed, immediately.
  // Transient for the caller: retryable, with a hint; its retry acquires again.
  expect(await expectAppError(call(handle, 'follow-up', { nonce }))).toMatchObject({
    code: 'FAILED_PRECONDITION',
    retryable: true,
    details: { reason: 'CONNECTION_GENERATION_GONE', why: 'OWNER_GONE', retryAfterMs: expect.any(Number) },
  });
  // Nothing was closed gracefully: the directory row is still LIVE under the dead owner's unexpired lease.
  const rowState = async () =>
    (
      await queryRegistrySchema<{ state: string; close_reason: string | null; fence: string }>(
        prefix,
        'SELECT state, close_reason, fence FROM connection_generations WHERE generation_id = $1',
        [handle.generationId],
      )
    )[0];
  expect(await rowState()).toMatchObject({ state: 'LIVE', close_reason: null });
  // The crashed owner's stdio server lost its parent's pipe and exited with it.
  await eventually(async () => (processAlive(mcpPid) ? undefined : true), 10_000);

  // The next acquire: the owner does not answer, so its lease ends now and a new generation is claimed on the survivor
  // with a higher fence, long before the 20 s lease would have lapsed; the old row is GONE.
  const replacement = await acquire(sessionId);
  expect(Date.now() - killedAt).toBeLessThan(CHILD_LEASE_MS);
  expect(replacement.generationId).not.toBe(handle.generationId);
  expect(replacement.ownerInstanceId).toBe('registry-survivor');
  expect(replacement.fence).toBeGreaterThan(handle.fence);
  expect(await rowState()).toMatchObject({ state: 'GONE', close_reason: 'OWNER_GONE' });
  // No migration: the old handle stays dead, and the new connection never saw the old nonce.
  expect(await expectAppError(call(handle, 'whoami'))).toMatchObject({ details: { reason: 'CONNECTION_GENERATION_GONE' } });
  expect((await call(replacement, 'follow-up', { nonce })).isError).toBe(true);
}, 120_000);
