import { randomUUID } from 'node:crypto';
import {
  ConnCallTool,
  ConnGenerationState,
  ConnRelease,
  ConnRetain,
  RegistryAcquireGeneration,
  RegistryPutProfile,
  RegistryPutToolset,
  type GenerationHandle,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import {
  dropSchemasWithPrefix,
  eventually,
  expectAppError,
  ManualClock,
  type PrivateNats,
  startFakeProviders,
  startPrivateNats,
  uniquePrefix,
} from '@apphost/testing';
import { alice, bootRegistry, fixtureSpec, profile, PROVIDER_FAKES, queryRegistrySchema, type RegistryUnderTest, session } from '../test/registry-harness';
import { callHeld } from '../test/call-started';

/*
 * `generation-state` on the owner: references (leases) by holder kind, operations in flight, evictable. The idle
 * timer runs on `clock`, so the test moves time past the profile's idle delay instead of waiting for it.
 */
const IDLE_MS = 500;
const clock = new ManualClock();
const prefix = uniquePrefix();
let nats: PrivateNats;
let registry: RegistryUnderTest;
let providers: { stop(): Promise<void> };

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  registry = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'registry-state' }, { clock });
  await registry.client.request(RegistryPutProfile, { profileId: 'short-idle', profile: profile({}, { idleEvictMs: IDLE_MS }) });
  await registry.client.request(RegistryPutToolset, { toolsetId: 'watched', spec: fixtureSpec('stateful-nonce', 'short-idle') });
}, 90_000);

afterAll(async () => {
  await registry?.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

const acquire = (sessionId: string, holder: { kind: 'view' | 'runner'; id: string }): Promise<GenerationHandle> =>
  registry.client.request(RegistryAcquireGeneration, {
    toolsetId: 'watched',
    connectionClass: 'app-safe',
    principal: alice,
    session: session(sessionId),
    holder,
  });
const stateOf = (ref: { generationId: string; fence: number; ownerInstanceId: string }) => requestOnGeneration(registry.client, ConnGenerationState, ref, {});
const release = (handle: GenerationHandle, leaseId: string) => requestOnGeneration(registry.client, ConnRelease, handle, { leaseId });

describe('generation-state on the owner', () => {
  it('counts leases by holder kind; the last release makes it evictable, and idle eviction then ends it', async () => {
    const handle = await acquire('state-1', { kind: 'view', id: 'view-1' });
    const reservation = randomUUID();
    expect(await requestOnGeneration(registry.client, ConnRetain, handle, { leaseId: reservation, holder: { kind: 'reservation', id: 'r-1' } })).toEqual({
      references: 2,
    });
    expect(await stateOf(handle)).toEqual({ references: 2, byHolderKind: { view: 1, reservation: 1 }, inflight: 0, evictable: false });

    expect(await release(handle, handle.leaseId)).toEqual({ released: true, references: 1 });
    expect(await stateOf(handle)).toEqual({ references: 1, byHolderKind: { reservation: 1 }, inflight: 0, evictable: false });

    expect(await release(handle, reservation)).toEqual({ released: true, references: 0 });
    expect(await stateOf(handle)).toEqual({ references: 0, byHolderKind: {}, inflight: 0, evictable: true });

    // Asking is not an operation: it does not restart the idle delay, which runs from the last release.
    clock.advance(IDLE_MS - 1);
    expect(await stateOf(handle)).toMatchObject({ evictable: true });
    clock.advance(1);
    expect(await expectAppError(stateOf(handle))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { reason: 'CONNECTION_GENERATION_GONE', why: 'IDLE_EVICTED' },
    });
    const row = await eventually(
      async () => {
        const rows = await queryRegistrySchema<{ state: string; close_reason: string | null }>(
          prefix,
          'SELECT state, close_reason FROM connection_generations WHERE generation_id = $1',
          [handle.generationId],
        );
        return rows[0]?.state === 'LIVE' ? undefined : rows[0];
      },
      10_000,
      50,
    );
    expect(row).toEqual({ state: 'CLOSED', close_reason: 'IDLE_EVICTED' });
  }, 60_000);

  it('an operation in flight is counted and keeps the generation from being evictable', async () => {
    const handle = await acquire('state-2', { kind: 'runner', id: 'run-1' });
    expect(await release(handle, handle.leaseId)).toEqual({ released: true, references: 0 });
    const held = callHeld('slow');
    const call = requestOnGeneration(registry.client, ConnCallTool, handle, { callId: 'held-1', name: 'slow', arguments: { ms: 1, steps: 1 } });
    await held.started;
    expect(await stateOf(handle)).toEqual({ references: 0, byHolderKind: {}, inflight: 1, evictable: false });
    clock.advance(IDLE_MS * 2);
    held.release();
    expect(await call).toMatchObject({ kind: 'complete' });
    expect(await stateOf(handle)).toEqual({ references: 0, byHolderKind: {}, inflight: 0, evictable: true });
  }, 60_000);

  it('an unknown generation, or a known one under another fence, is CONNECTION_GENERATION_GONE', async () => {
    const unknown = { generationId: randomUUID(), fence: 1, ownerInstanceId: registry.instanceId };
    expect(await expectAppError(stateOf(unknown))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { reason: 'CONNECTION_GENERATION_GONE', why: 'NOT_OWNED_HERE' },
    });
    const handle = await acquire('state-3', { kind: 'view', id: 'view-3' });
    expect(await expectAppError(stateOf({ ...handle, fence: handle.fence + 1 }))).toMatchObject({
      details: { reason: 'CONNECTION_GENERATION_GONE', why: 'FENCE_MISMATCH' },
    });
  }, 60_000);
});
