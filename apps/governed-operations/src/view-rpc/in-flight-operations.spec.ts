import { BusClient, type NatsTransport } from '@apphost/bus';
import { RedisCoordinationStore } from '@apphost/coordination';
import {
  ConnCallTool,
  describeContract,
  RegistryAcquireGeneration,
  RegistryPutToolset,
  viewPolicyOf,
  type GenerationHandle,
  type HostProfile,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import {
  connectTestTransport,
  dropSchemasWithPrefix,
  eventually,
  expectAppError,
  fixtureServerCommand,
  sleep,
  spawnTs,
  startPrivateNats,
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  testLogger,
  uniquePrefix,
  waitForExit,
  type PrivateNats,
} from '@apphost/testing';
import { testProfile } from '../test/fake-plane';
import { viewRecordSchema, type ViewRecord } from '../views/view-records';
import { InFlightOperations } from './in-flight-operations';
import type { ViewContext } from './ports';

/**
 * The live JSON-RPC id scope of View generations and cancellation across replicas: two `InFlightOperations` (two
 * replicas: own Redis and NATS connections) over real Redis, and a real binding-registry process owning a
 * stateful-nonce stdio generation, so a cancel from the replica that did not start a call aborts it upstream.
 */
jest.setTimeout(60_000);

const prefix = uniquePrefix();
const keyPrefix = `apphost:${prefix}in-flight-spec:`;
let nats: PrivateNats;
let registry: ReturnType<typeof spawnTs>;
let transports: NatsTransport[];
let buses: BusClient[];
let stores: RedisCoordinationStore[];
let a: InFlightOperations;
let b: InFlightOperations;
let handle: GenerationHandle;

beforeAll(async () => {
  nats = await startPrivateNats();
  registry = spawnTs('apps/binding-registry/src/main.ts', {
    NATS_URL: nats.url,
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_SCHEMA_PREFIX: prefix,
    INSTANCE_ID: 'in-flight-registry',
    REGISTRY_ALLOW_STDIO: 'true',
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    LOG_LEVEL: 'warn',
  });
  transports = await Promise.all(['a', 'b'].map((name) => connectTestTransport(`in-flight-${name}`, { natsUrl: nats.url })));
  buses = transports.map((transport) => new BusClient({ transport, defaultTimeoutMs: 10_000 }));
  stores = await Promise.all(['a', 'b'].map((name) => RedisCoordinationStore.connect({ url: TEST_REDIS_URL, keyPrefix, name: `in-flight-${name}` })));
  a = new InFlightOperations(stores[0], buses[0], testLogger('in-flight-a'));
  b = new InFlightOperations(stores[1], buses[1], testLogger('in-flight-b'));

  await eventually(() => buses[0].request(describeContract('binding-registry'), {}, { timeoutMs: 1000 }), 50_000, 200);
  const fixture = fixtureServerCommand('stateful-nonce');
  await buses[0].request(
    RegistryPutToolset,
    { toolsetId: 'nonce', spec: { connection: { kind: 'stdio', command: fixture.command, args: fixture.args, cwd: fixture.cwd }, profileId: null } },
    { timeoutMs: 30_000 },
  );
  handle = await buses[0].request(
    RegistryAcquireGeneration,
    {
      toolsetId: 'nonce',
      connectionClass: 'app-safe',
      principal: { tenant: 'acme', subject: 'alice', scopes: [] },
      session: { key: { tenant: 'acme', appName: 'app', userId: 'alice', sessionId: 's1' }, incarnation: 1 },
      holder: { kind: 'view', id: 'in-flight-spec' },
    },
    { timeoutMs: 30_000 },
  );
}, 90_000);

afterAll(async () => {
  await Promise.all((stores ?? []).map((s) => s.close()));
  await Promise.all((transports ?? []).map((t) => t.close()));
  if (registry && registry.exitCode === null && registry.signalCode === null) {
    registry.kill('SIGTERM');
    await waitForExit(registry, 20_000).catch(() => registry.kill('SIGKILL'));
  }
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

let views = 0;
/** A live View on the registry's generation (or on none, or another owner's), as authentication hands it over. */
function viewOf(options: { viewGeneration?: number; generation?: ViewRecord['generation'] | 'registry'; profile?: HostProfile } = {}): ViewContext {
  const generation =
    (options.generation ?? 'registry') === 'registry'
      ? { generationId: handle.generationId, fence: handle.fence, ownerInstanceId: handle.ownerInstanceId, connectionClass: handle.connectionClass }
      : (options.generation as ViewRecord['generation']);
  const record = viewRecordSchema.parse({
    v: 1,
    viewId: `vw-${(++views).toString(16).padStart(32, '0')}`,
    mode: 'live',
    state: 'ACTIVE',
    reason: null,
    principalDigest: 'f'.repeat(64),
    session: { tenant: 'acme', appName: 'app', userId: 'alice', sessionId: 's1' },
    incarnation: 1,
    widget: { widgetId: '1:fc-1', eventId: 1, functionCallId: 'fc-1', resourceUri: 'ui://nonce/view', tool: 'nonce-view', toolsetId: 'nonce' },
    viewGeneration: options.viewGeneration ?? 1,
    serverId: 'nonce',
    profileId: 'p',
    bindingRevision: null,
    bindingGeneration: 1,
    generation,
    leaseId: null,
    released: false,
    grantDigest: null,
    leaseMs: 60_000,
    createdAt: new Date().toISOString(),
    expiresAt: null,
    teardownRequestedAt: null,
    actions: [],
    replaySafe: false,
    register: null,
    contextSequence: 0,
  });
  const profile = options.profile ?? testProfile();
  return { view: { record, raw: JSON.stringify(record) }, profile, policy: viewPolicyOf(profile) };
}

const inUse = (work: Promise<unknown>) => expectAppError(work, 'INVALID_ARGUMENT', 'RPC_ID_IN_USE');

/** A `tools/call` on the registry's generation under `callId`, as the service runs it for a View request. */
const callTool = (bus: BusClient, callId: string, name: string, args: Record<string, unknown> = {}) =>
  requestOnGeneration(bus, ConnCallTool, handle, { callId, name, arguments: args }, { timeoutMs: 30_000 });
async function whoami(): Promise<{ cancellations: number; slowStarted: number }> {
  const out = await callTool(buses[0], `whoami-${Math.random()}`, 'whoami');
  if (out.kind !== 'complete') throw new Error('whoami did not complete');
  return out.result['structuredContent'] as { cancellations: number; slowStarted: number };
}

describe('InFlightOperations: the live id scope', () => {
  it('an equal id live on the same View generation is RPC_ID_IN_USE, on any replica; other Views and generations proceed', async () => {
    const view = viewOf();
    const first = await a.begin(view, 1, 'tools/call');
    expect(first.callId).toMatch(/^vc-[0-9a-f]{32}$/);
    const error = await inUse(b.begin(view, 1, 'resources/read'));
    expect(error.details).toMatchObject({ id: 1 });
    await inUse(a.begin(view, 1, 'ping'));
    // Equal ids on another View, or on the next generation of this View, are other ids.
    const other = await b.begin(viewOf(), 1, 'tools/call');
    const next = await b.begin({ ...view, view: { ...view.view, record: { ...view.view.record, viewGeneration: 2 } } }, 1, 'tools/call');
    expect(new Set([first.callId, other.callId, next.callId]).size).toBe(3);
    for (const op of [first, other, next]) expect(await op.settle()).toBe(true);
  });

  it('the string "7" and the number 7 are different ids', async () => {
    const view = viewOf();
    const ops = await Promise.all([a.begin(view, 7, 'tools/call'), b.begin(view, '7', 'tools/call')]);
    await inUse(a.begin(view, '7', 'ping'));
    await inUse(b.begin(view, 7, 'ping'));
    for (const op of ops) expect(await op.settle()).toBe(true);
  });

  it('an id is free again once settled (on any replica); settle is idempotent', async () => {
    const view = viewOf();
    const first = await a.begin(view, 'req-1', 'tools/call');
    expect(await first.settle()).toBe(true);
    expect(await first.settle()).toBe(true);
    const again = await b.begin(view, 'req-1', 'tools/call');
    expect(again.callId).not.toBe(first.callId);
    // The earlier operation's settle never touches the new holder of the id.
    expect(await first.settle()).toBe(true);
    await inUse(a.begin(view, 'req-1', 'tools/call'));
    expect(await again.settle()).toBe(true);
  });

  it('of N concurrent requests with one id, exactly one holds it', async () => {
    const view = viewOf();
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).begin(view, 42, 'tools/call')));
    const held = results.filter((r) => r.status === 'fulfilled');
    expect(held).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.details.reason)).toEqual(
      Array(7).fill('RPC_ID_IN_USE'),
    );
    expect(await (held[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof a.begin>>>).value.settle()).toBe(true);
  });

  it('the ids of a crashed replica expire after the longest operation the profile allows (plus the margin)', async () => {
    const quick = testProfile();
    quick.limits = { ...quick.limits, callTimeoutMs: 1000, readTimeoutMs: 500, mrtr: { maxRounds: 2, maxTotalMs: 600 } };
    const crashing = new InFlightOperations(stores[0], buses[0], testLogger('in-flight-crashing'), { marginMs: 100 });
    const view = viewOf({ profile: quick });
    await crashing.begin(view, 'lost', 'tools/call'); // never settled: its replica died
    await inUse(b.begin(view, 'lost', 'tools/call'));
    const reused = await eventually(() => b.begin(view, 'lost', 'tools/call').catch(() => undefined), 5_000, 50);
    expect(await reused.settle()).toBe(true);
  });
});

describe('InFlightOperations: first terminal outcome wins', () => {
  it('completion first: settle answers true; a later cancel finds nothing live and is ignored', async () => {
    const view = viewOf();
    const op = await a.begin(view, 5, 'tools/call');
    expect(await op.settle()).toBe(true);
    expect(await b.cancel(view, 5)).toBe(false);
    expect(await op.settle()).toBe(true);
  });

  it('cancel first: settle answers false (no late response), repeatedly; a second cancel is ignored; the id is free', async () => {
    const view = viewOf();
    const op = await a.begin(view, 6, 'resources/read');
    const started = Date.now();
    expect(await b.cancel(view, 6)).toBe(true);
    // Nothing reached the owner under its call id yet: the notification is answered anyway, without waiting for it.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await a.cancel(view, 6)).toBe(false);
    await inUse(b.begin(view, 6, 'resources/read'));
    expect(await op.settle()).toBe(false);
    expect(await op.settle()).toBe(false);
    expect(await a.cancel(view, 6)).toBe(false);
    expect(await (await b.begin(view, 6, 'resources/read')).settle()).toBe(true);
  });

  it('cancel and completion racing: exactly one wins, whatever the order', async () => {
    for (let round = 0; round < 10; round++) {
      const view = viewOf();
      const op = await a.begin(view, round, 'tools/call');
      const [delivered, cancelled] =
        round % 2 ? await Promise.all([op.settle(), b.cancel(view, round)]) : await Promise.all([b.cancel(view, round), op.settle()]).then(([c, d]) => [d, c]);
      expect(delivered).toBe(!cancelled);
    }
  });

  it('an unknown id, or one of another View, cancels nothing', async () => {
    const view = viewOf();
    const op = await a.begin(view, 'mine', 'tools/call');
    expect(await b.cancel(view, 'other')).toBe(false);
    expect(await b.cancel(viewOf(), 'mine')).toBe(false);
    expect(await op.settle()).toBe(true);
  });
});

describe('InFlightOperations: cancellation reaches the upstream call from any replica', () => {
  it('a cancel on replica b aborts the call replica a runs: the server sees notifications/cancelled, a settles false', async () => {
    const view = viewOf();
    const before = await whoami();
    const op = await a.begin(view, 'long', 'tools/call');
    const inflight = callTool(buses[0], op.callId, 'slow', { ms: 20_000, steps: 40 });
    await eventually(async () => (await whoami()).slowStarted > before.slowStarted, 15_000, 50);
    expect(await b.cancel(view, 'long')).toBe(true);
    await expectAppError(inflight, 'FAILED_PRECONDITION', 'CANCELLED');
    expect(await eventually(async () => ((await whoami()).cancellations > before.cancellations ? true : undefined), 15_000, 50)).toBe(true);
    expect(await op.settle()).toBe(false);
  });

  it('a cancel that arrives before the call reaches the owner still cancels it once it does', async () => {
    const view = viewOf();
    const op = await a.begin(view, 'early', 'tools/call');
    const cancelled = b.cancel(view, 'early');
    await sleep(150); // the barrier and the rest of the pipeline run before the call is sent
    const inflight = callTool(buses[0], op.callId, 'slow', { ms: 20_000, steps: 40 });
    expect(await cancelled).toBe(true);
    await expectAppError(inflight, 'FAILED_PRECONDITION', 'CANCELLED');
    expect(await op.settle()).toBe(false);
  });

  it('a View whose generation is gone (its owner not running) cancels fine: nothing is left upstream', async () => {
    const gone = { generationId: '00000000-0000-4000-8000-0000000000aa', fence: 1, ownerInstanceId: 'gone-owner', connectionClass: 'app-safe' as const };
    const view = viewOf({ generation: gone });
    const op = await b.begin(view, 1, 'tools/call');
    expect(await a.cancel(view, 1)).toBe(true);
    expect(await op.settle()).toBe(false);
  });
});
