import { randomUUID } from 'node:crypto';
import {
  ConnCallTool,
  ConnCancelCall,
  ConnEndSession,
  ConnGenerationState,
  ConnListResources,
  ConnListResourceTemplates,
  ConnRelease,
  RegistryAcquireGeneration,
  RegistryPutProfile,
  RegistryPutToolset,
  type GenerationHandle,
  type HostProfile,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { dropSchemasWithPrefix, eventually, expectAppError, type PrivateNats, startFakeProviders, startPrivateNats, uniquePrefix } from '@apphost/testing';
import { alice, bootRegistry, fixtureSpec, profile, PROVIDER_FAKES, type RegistryUnderTest, session } from '../test/registry-harness';
import { callStarted, listingHeld } from '../test/call-started';

/*
 * The connection side of View operations on a real generation: `list-resources` / `list-resource-templates` on the
 * owner (bounded like `list-tools`, counted in flight, gone like every operation), and app-safe multi-round-trip calls
 * (state-only rounds continued by the owner within the profile's MRTR caps; input requests refused).
 */
const prefix = uniquePrefix();
const MRTR = { maxRounds: 3, maxTotalMs: 30_000 };
let nats: PrivateNats;
let registry: RegistryUnderTest;
let providers: { stop(): Promise<void> };

function viewProfile(): HostProfile {
  const base = profile();
  // A short walk budget: the hostile `slow` pages (5 s each) exceed it without the suite waiting long.
  return { ...base, limits: { ...base.limits, discovery: { ...base.limits.discovery, maxTimeMs: 1500 }, mrtr: MRTR } };
}

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  registry = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'registry-view-ops' });
  await registry.client.request(RegistryPutProfile, { profileId: 'view', profile: viewProfile() });
  const toolsets: [string, ReturnType<typeof fixtureSpec>][] = [
    ['nonce', fixtureSpec('stateful-nonce', 'view')],
    ['modern-nonce', fixtureSpec('stateful-nonce', 'view', [], '2026-07-28')],
    ['endless', fixtureSpec('hostile', 'view', ['--mode=endless'])],
    ['many', fixtureSpec('hostile', 'view', ['--mode=many-items'])],
    ['oversized', fixtureSpec('hostile', 'view', ['--mode=oversized'])],
    ['slow', fixtureSpec('hostile', 'view', ['--mode=slow'])],
    ['tools-only', fixtureSpec('hostile', 'view', ['--mode=tools-only'])],
  ];
  for (const [toolsetId, spec] of toolsets) await registry.client.request(RegistryPutToolset, { toolsetId, spec });
}, 90_000);

afterAll(async () => {
  await registry?.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

const acquire = (toolsetId: string, sessionId = `s-${randomUUID()}`): Promise<GenerationHandle> =>
  registry.client.request(RegistryAcquireGeneration, {
    toolsetId,
    connectionClass: 'app-safe',
    principal: alice,
    session: session(sessionId),
    holder: { kind: 'view', id: `v-${randomUUID()}` },
  });
const resources = (h: GenerationHandle) => requestOnGeneration(registry.client, ConnListResources, h, {});
const templates = (h: GenerationHandle) => requestOnGeneration(registry.client, ConnListResourceTemplates, h, {});
const call = (h: GenerationHandle, name: string, args: Record<string, unknown>, callId = `c-${randomUUID()}`) =>
  requestOnGeneration(registry.client, ConnCallTool, h, { callId, name, arguments: args });

describe('list-resources and list-resource-templates on the owner', () => {
  it('answer every resource and template the generation’s server lists, as listed', async () => {
    const h = await acquire('nonce');
    const listed = await resources(h);
    expect(listed.pages).toBe(1);
    expect(listed.bytes).toBeGreaterThan(0);
    expect(listed.resources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ uri: 'ui://stateful-nonce/app.html', mimeType: 'text/html;profile=mcp-app' }),
        expect.objectContaining({ uri: 'ui://stateful-nonce/docs/guide/intro.md', mimeType: 'text/markdown' }),
        expect.objectContaining({ uri: 'ui://stateful-nonce/docs-archive/old.txt' }),
      ]),
    );
    const listedTemplates = await templates(h);
    expect(listedTemplates.resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual([
      'ui://stateful-nonce/docs/big/{bytes}',
      'ui://stateful-nonce/docs/chunks/{count}/{bytes}',
    ]);
    expect(await resources(await acquire('tools-only'))).toEqual({ resources: [], pages: 0, bytes: 0 });
  }, 60_000);

  it.each([
    ['endless', 'RESOURCE_EXHAUSTED', 'DISCOVERY_TOO_MANY_PAGES'],
    ['many', 'RESOURCE_EXHAUSTED', 'DISCOVERY_TOO_MANY_ITEMS'],
    ['oversized', 'RESOURCE_EXHAUSTED', 'DISCOVERY_TOO_MANY_BYTES'],
    ['slow', 'DEADLINE_EXCEEDED', 'DISCOVERY_TIMEOUT'],
  ])(
    '%s → %s %s within the profile’s discovery limits, for both listings (never a partial one)',
    async (toolsetId, code, reason) => {
      const h = await acquire(toolsetId);
      const [r, t] = await Promise.all([expectAppError(resources(h)), expectAppError(templates(h))]);
      for (const error of [r, t]) expect(error).toMatchObject({ code, details: { reason } });
    },
    60_000,
  );

  it('a listing counts as in-flight work: the generation is not evictable until it ends', async () => {
    const h = await acquire('nonce');
    expect(await requestOnGeneration(registry.client, ConnRelease, h, { leaseId: h.leaseId })).toEqual({ released: true, references: 0 });
    for (const method of ['listResources', 'listResourceTemplates'] as const) {
      const held = listingHeld(method);
      const listing = method === 'listResources' ? resources(h) : templates(h);
      await held.started;
      expect(await requestOnGeneration(registry.client, ConnGenerationState, h, {})).toMatchObject({ inflight: 1, evictable: false });
      held.release();
      await listing;
      expect(await requestOnGeneration(registry.client, ConnGenerationState, h, {})).toMatchObject({ inflight: 0, evictable: true });
    }
  }, 60_000);

  it('a generation that is not the owner’s, under another fence, ended, or whose owner is gone is CONNECTION_GENERATION_GONE', async () => {
    const sessionId = `gone-${randomUUID()}`;
    const h = await acquire('nonce', sessionId);
    const gone = (why: string) => ({ code: 'FAILED_PRECONDITION', details: { reason: 'CONNECTION_GENERATION_GONE', why } });
    for (const list of [resources, templates]) {
      expect(await expectAppError(list({ ...h, generationId: randomUUID() }))).toMatchObject(gone('NOT_OWNED_HERE'));
      expect(await expectAppError(list({ ...h, fence: h.fence + 1 }))).toMatchObject(gone('FENCE_MISMATCH'));
      expect(await expectAppError(list({ ...h, ownerInstanceId: 'registry-nobody' }))).toMatchObject(gone('OWNER_GONE'));
    }
    await registry.client.request(
      ConnEndSession,
      { session: session(sessionId).key, incarnation: 1 },
      { instance: { id: h.ownerInstanceId, segment: 'conn' } },
    );
    for (const list of [resources, templates]) expect(await expectAppError(list(h))).toMatchObject(gone('SESSION_DELETED'));
  }, 60_000);
});

describe('app-safe multi-round-trip calls through the owner (2026-07-28)', () => {
  it('state-only rounds are continued by the owner up to the profile’s maxRounds: one call, one terminal result', async () => {
    const h = await acquire('modern-nonce');
    const out = await call(h, 'stepper', { rounds: MRTR.maxRounds });
    expect(out).toMatchObject({ kind: 'complete', result: { structuredContent: { legs: MRTR.maxRounds + 1, exact: [true, true, true] } } });
    const capped = await expectAppError(call(h, 'stepper', { rounds: MRTR.maxRounds + 1 }));
    expect(capped).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_ROUNDS_EXCEEDED' } });
  }, 60_000);

  it('a round that requests input fails closed', async () => {
    const h = await acquire('modern-nonce');
    expect(await expectAppError(call(h, 'ask', {}))).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_DENIED' } });
  }, 60_000);

  it('cancel-call aborts the leg running mid-flow; the server sees the cancellation and no further leg', async () => {
    const h = await acquire('modern-nonce');
    const whoami = async () => {
      const out = await call(h, 'whoami', {});
      if (out.kind !== 'complete') throw new Error('whoami is a single round');
      return out.result['structuredContent'] as { stepperLegs: number; cancellations: number };
    };
    const before = await whoami();
    const started = callStarted('stepper');
    const flow = call(h, 'stepper', { rounds: 2, delayMs: 20_000, delayLeg: 2 }, 'mid-flow');
    await started;
    await eventually(async () => (await whoami()).stepperLegs === before.stepperLegs + 2, 10_000, 50);
    expect(await requestOnGeneration(registry.client, ConnCancelCall, h, { callId: 'mid-flow' })).toEqual({ cancelled: true });
    expect(await expectAppError(flow)).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'CANCELLED' } });
    await eventually(async () => (await whoami()).cancellations === before.cancellations + 1, 10_000, 50);
    expect((await whoami()).stepperLegs).toBe(before.stepperLegs + 2);
  }, 60_000);
});
