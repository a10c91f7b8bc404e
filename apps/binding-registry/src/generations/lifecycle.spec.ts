import {
  ConnCallTool,
  ConnCancelCall,
  ConnPing,
  ConnRelease,
  RegistryAcquireGeneration,
  RegistryPutProfile,
  RegistryPutToolset,
  type GenerationHandle,
  type ResponseOf,
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
import { callHeld, callStarted } from '../test/call-started';

/*
 * Idle eviction, maximum lifetime, cancellation and multi-round input requests, all through the bus. The registry
 * runs its idle, lifetime and flow-deadline timers on `clock`: tests advance it instead of waiting for real time.
 */
const IDLE_MS = 400;
const LIFETIME_MS = 4000;
const MRTR_TOTAL_MS = 30_000;
const clock = new ManualClock();
const prefix = uniquePrefix();
let nats: PrivateNats;
let registry: RegistryUnderTest;
let providers: { stop(): Promise<void> };

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  registry = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'registry-life' }, { clock });
  const put = async (profileId: string, p: ReturnType<typeof profile>) => registry.client.request(RegistryPutProfile, { profileId, profile: p });
  await put('idle', profile({}, { idleEvictMs: IDLE_MS }));
  await put('lifetime', profile({}, { maxLifetimeMs: LIFETIME_MS }));
  const mrtr = profile();
  mrtr.limits.mrtr = { maxRounds: 2, maxTotalMs: MRTR_TOTAL_MS };
  await put('mrtr', mrtr);
  await registry.client.request(RegistryPutToolset, { toolsetId: 'idle', spec: fixtureSpec('stateful-nonce', 'idle') });
  await registry.client.request(RegistryPutToolset, { toolsetId: 'lifetime', spec: fixtureSpec('stateful-nonce', 'lifetime') });
  await registry.client.request(RegistryPutToolset, { toolsetId: 'modern', spec: fixtureSpec('stateful-nonce', 'mrtr', [], '2026-07-28') });
}, 90_000);

afterAll(async () => {
  await registry?.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

const acquire = (toolsetId: string, sessionId: string, connectionClass: 'app-safe' | 'full' = 'app-safe'): Promise<GenerationHandle> =>
  registry.client.request(RegistryAcquireGeneration, {
    toolsetId,
    connectionClass,
    principal: alice,
    session: session(sessionId),
    holder: { kind: 'view', id: `v-${Math.random()}` },
  });
const callTool = (
  handle: GenerationHandle,
  name: string,
  args: Record<string, unknown>,
  extra: { callId?: string; continuation?: { flowId: string; inputResponses: Record<string, unknown>; requestState?: string } } = {},
) =>
  requestOnGeneration(
    registry.client,
    ConnCallTool,
    handle,
    { callId: extra.callId ?? `c-${Math.random()}`, name, arguments: args, ...(extra.continuation ? { continuation: extra.continuation } : {}) },
    { timeoutMs: 30_000 },
  );
const ping = (handle: GenerationHandle) => requestOnGeneration(registry.client, ConnPing, handle, {});
const release = (handle: GenerationHandle) => requestOnGeneration(registry.client, ConnRelease, handle, { leaseId: handle.leaseId });
const goneBecause = (why: string) => ({ code: 'FAILED_PRECONDITION', details: { reason: 'CONNECTION_GENERATION_GONE', why } });
const rowOf = async (generationId: string) =>
  (
    await queryRegistrySchema<{ state: string; close_reason: string | null }>(
      prefix,
      'SELECT state, close_reason FROM connection_generations WHERE generation_id = $1',
      [generationId],
    )
  )[0];

describe('idle eviction and maximum lifetime (from the profile)', () => {
  it('the last release makes a generation evictable; in-flight operations hold it; idle eviction ends it for good', async () => {
    const handle = await acquire('idle', 'idle-1');
    const held = callHeld('slow');
    const slow = callTool(handle, 'slow', { ms: 10, steps: 1 });
    await held.started;
    expect(await release(handle)).toEqual({ released: true, references: 0 });
    // No lease left, but the call is in flight: the generation outlives any idle delay.
    clock.advance(IDLE_MS * 3);
    held.release();
    expect(await slow).toMatchObject({ kind: 'complete', result: { structuredContent: { slept: 10 } } });
    // Nothing holds it now: the idle delay runs from the end of the last operation (a ping is one, and restarts it).
    clock.advance(IDLE_MS - 1);
    expect((await ping(handle)).ok).toBe(true);
    clock.advance(IDLE_MS);
    expect(await expectAppError(ping(handle))).toMatchObject(goneBecause('IDLE_EVICTED'));
    // The owner stops serving the generation first, then records why: the durable row follows shortly after.
    const row = await eventually(
      async () => {
        const r = await rowOf(handle.generationId);
        return r?.state === 'LIVE' ? undefined : r;
      },
      10_000,
      50,
    );
    expect(row).toEqual({ state: 'CLOSED', close_reason: 'IDLE_EVICTED' });
    const next = await acquire('idle', 'idle-1');
    expect(next.generationId).not.toBe(handle.generationId);
    expect(next.fence).toBeGreaterThan(handle.fence);
  }, 60_000);

  it('a held reference keeps a generation from idle eviction', async () => {
    const handle = await acquire('idle', 'idle-held');
    // Operations end while the lease is held: none of them may start the idle delay.
    expect((await ping(handle)).ok).toBe(true);
    clock.advance(IDLE_MS * 3);
    expect((await ping(handle)).ok).toBe(true);
    expect(await rowOf(handle.generationId)).toEqual({ state: 'LIVE', close_reason: null });
    // The same wait without the lease ends it: the lease is what kept it.
    expect(await release(handle)).toEqual({ released: true, references: 0 });
    clock.advance(IDLE_MS);
    expect(await expectAppError(ping(handle))).toMatchObject(goneBecause('IDLE_EVICTED'));
  }, 60_000);

  it('the maximum lifetime ends a generation even while references are held', async () => {
    const handle = await acquire('lifetime', 'life-1');
    expect((await ping(handle)).ok).toBe(true);
    // The lease is held and pings (in-flight references) keep coming: neither extends a lifetime.
    clock.advance(LIFETIME_MS - 1);
    expect((await ping(handle)).ok).toBe(true);
    clock.advance(1);
    expect(await expectAppError(ping(handle))).toMatchObject(goneBecause('MAX_LIFETIME'));
    // The owner stops serving the generation first, then records why: the durable row follows shortly after.
    const closed = await eventually(
      async () => {
        const row = await rowOf(handle.generationId);
        return row.state === 'CLOSED' ? row : undefined;
      },
      10_000,
      50,
    );
    expect(closed).toEqual({ state: 'CLOSED', close_reason: 'MAX_LIFETIME' });
    const next = await acquire('lifetime', 'life-1');
    expect(next.generationId).not.toBe(handle.generationId);
    expect(next.fence).toBeGreaterThan(handle.fence);
  }, 60_000);
});

describe('cancel-call', () => {
  it('cancels an in-flight call: the caller gets CANCELLED, the server sees notifications/cancelled, the generation lives on', async () => {
    const handle = await acquire('idle', 'cancel-1');
    const started = callStarted('slow');
    const inflight = callTool(handle, 'slow', { ms: 20_000, steps: 40 }, { callId: 'call-to-cancel' });
    await started;
    // Handed to the connection is not yet received by the server: cancel only once the server runs the call.
    await eventually(async () => {
      const out = await callTool(handle, 'whoami', {});
      return out.kind === 'complete' && (out.result['structuredContent'] as { slowStarted: number }).slowStarted >= 1 ? true : undefined;
    }, 15_000);
    expect(await requestOnGeneration(registry.client, ConnCancelCall, handle, { callId: 'call-to-cancel' })).toEqual({ cancelled: true });
    expect(await expectAppError(inflight)).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'CANCELLED' } });
    // Nothing left to cancel under that id.
    expect(await requestOnGeneration(registry.client, ConnCancelCall, handle, { callId: 'call-to-cancel' })).toEqual({ cancelled: false });
    const seen = await eventually(async () => {
      const out = await callTool(handle, 'whoami', {});
      const cancellations = out.kind === 'complete' ? (out.result['structuredContent'] as { cancellations: number }).cancellations : 0;
      return cancellations >= 1 ? cancellations : undefined;
    }, 15_000);
    expect(seen).toBe(1);
    expect((await ping(handle)).ok).toBe(true);
  }, 60_000);

  it('a call id in flight cannot be reused; unknown call ids cancel nothing', async () => {
    const handle = await acquire('idle', 'cancel-2');
    const started = callStarted('slow');
    const inflight = callTool(handle, 'slow', { ms: 1000, steps: 1 }, { callId: 'dup' });
    await started;
    expect(await expectAppError(callTool(handle, 'slow', { ms: 10, steps: 1 }, { callId: 'dup' }))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { reason: 'CALL_ID_IN_FLIGHT' },
    });
    expect(await requestOnGeneration(registry.client, ConnCancelCall, handle, { callId: 'never-started' })).toEqual({ cancelled: false });
    expect(await inflight).toMatchObject({ kind: 'complete' });
  }, 60_000);
});

describe('multi-round input requests on a full connection (2026-07-28), through the bus', () => {
  type Outcome = ResponseOf<typeof ConnCallTool>;
  const asRound = (o: Outcome) => {
    if (o.kind !== 'input_required') throw new Error(`expected an input round, got ${o.kind}`);
    return o;
  };

  it('each round returns to the caller; requestState must be echoed exactly; the echo reaches the server', async () => {
    const handle = await acquire('modern', 'mrtr-1', 'full');
    const round1 = asRound(await callTool(handle, 'confirm', { action: 'deploy' }));
    expect(round1).toMatchObject({ round: 1, requestState: 'state-for-deploy', inputRequests: { confirm: { method: 'elicitation/create' } } });
    for (const forged of ['forged', 'state-for-deploy ', 'STATE-FOR-DEPLOY']) {
      const error = await expectAppError(
        callTool(handle, 'confirm', { action: 'deploy' }, { continuation: { flowId: round1.flowId, inputResponses: {}, requestState: forged } }),
      );
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'REQUEST_STATE_MISMATCH' } });
    }
    const done = await callTool(
      handle,
      'confirm',
      { action: 'deploy' },
      {
        continuation: {
          flowId: round1.flowId,
          inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
          requestState: round1.requestState,
        },
      },
    );
    expect(done).toMatchObject({ kind: 'complete', result: { structuredContent: { confirmed: true, action: 'deploy', requestState: 'state-for-deploy' } } });
    // The flow is finished: it cannot be continued again.
    const replay = await expectAppError(
      callTool(handle, 'confirm', { action: 'deploy' }, { continuation: { flowId: round1.flowId, inputResponses: {}, requestState: round1.requestState } }),
    );
    expect(replay).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_FLOW_UNKNOWN' } });
  }, 60_000);

  it('rounds are bounded by the profile (maxRounds = 2)', async () => {
    const handle = await acquire('modern', 'mrtr-2', 'full');
    const round1 = asRound(await callTool(handle, 'confirm', { action: 'x' }));
    const round2 = asRound(
      await callTool(handle, 'confirm', { action: 'x' }, { continuation: { flowId: round1.flowId, inputResponses: {}, requestState: round1.requestState } }),
    );
    expect(round2).toMatchObject({ flowId: round1.flowId, round: 2 });
    const capped = await expectAppError(
      callTool(handle, 'confirm', { action: 'x' }, { continuation: { flowId: round2.flowId, inputResponses: {}, requestState: round2.requestState } }),
    );
    expect(capped).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_ROUNDS_EXCEEDED' } });
  }, 60_000);

  it('total time of a flow is bounded by the profile, counted from its first round', async () => {
    const handle = await acquire('modern', 'mrtr-3', 'full');
    const round1 = asRound(await callTool(handle, 'confirm', { action: 'late' }));
    // Within the total (a new round does not restart it), the flow goes on.
    clock.advance(MRTR_TOTAL_MS / 2);
    const round2 = asRound(
      await callTool(handle, 'confirm', { action: 'late' }, { continuation: { flowId: round1.flowId, inputResponses: {}, requestState: round1.requestState } }),
    );
    expect(round2).toMatchObject({ flowId: round1.flowId, round: 2 });
    clock.advance(MRTR_TOTAL_MS / 2 + 1);
    const late = await expectAppError(
      callTool(
        handle,
        'confirm',
        { action: 'late' },
        {
          continuation: {
            flowId: round2.flowId,
            inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
            requestState: round2.requestState,
          },
        },
      ),
    );
    expect(late).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_TIME_EXCEEDED' } });
  }, 60_000);

  it('the same tool on an app-safe connection fails closed at the first round', async () => {
    const handle = await acquire('modern', 'mrtr-4', 'app-safe');
    expect(await expectAppError(callTool(handle, 'confirm', { action: 'deploy' }))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { reason: 'INPUT_REQUIRED_DENIED' },
    });
  }, 60_000);
});
