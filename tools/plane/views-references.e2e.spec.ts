import Redis from 'ioredis';
import { ConnGenerationState, type RunToolBatchResponse } from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import {
  dropSchemasWithPrefix,
  expectAppError,
  PUBLISHED_SERVERS,
  startFakeProviders,
  startPrivateNats,
  TEST_REDIS_URL,
  uniquePrefix,
  type PrivateNats,
} from '@apphost/testing';
import { fixtureSpec, publishedSpec, token } from './catalog-harness';
import {
  bootViewPlane,
  putProfile,
  putToolset,
  sessionWithUiCall,
  viewHttp,
  viewProfile,
  type HttpReply,
  type RegistryProcess,
  type ViewPlane,
} from './views-harness';

/**
 * The registry's own reference counts of a View's producing generation, on the real plane: binding-registry in its
 * own process (so its owner can crash), the stateful-nonce fixture and the published vanillajs server over stdio,
 * private NATS, real PostgreSQL and Redis. Counts are read with `generation-state` on the owner's subject.
 * Budget: ~40 s to boot and bind, ~60 s of tests (2 busy cores).
 */
jest.setTimeout(180_000);

const VANILLA = PUBLISHED_SERVERS.basicVanillaJs;

interface GenerationAddress {
  generationId: string;
  fence: number;
  ownerInstanceId: string;
}

describe('View references and owner restart in the plane', () => {
  const prefix = uniquePrefix();
  let nats: PrivateNats;
  let providers: { stop(): Promise<void> };
  let plane: ViewPlane;
  let http: ReturnType<typeof viewHttp>;
  let redis: Redis;
  let owner: RegistryProcess;
  let alice: string;

  const open = (appName: string, sessionId: string, ev: RunToolBatchResponse): Promise<HttpReply> =>
    http('POST', '/v1/views', { bearer: alice, body: { appName, sessionId, eventId: ev.eventId, functionCallId: 'call-1' } });
  const getView = (viewId: string) => http('GET', `/v1/views/${viewId}`, { bearer: alice });
  const renew = (viewId: string, grant: string) => http('POST', `/v1/views/${viewId}:renew`, { bearer: alice, headers: { 'x-apphost-view-grant': grant } });
  const generationOf = async (viewId: string): Promise<GenerationAddress> => (await getView(viewId)).body.generation as GenerationAddress;
  const stateOf = (generation: GenerationAddress) => requestOnGeneration(plane.registry.client, ConnGenerationState, generation, {});
  /** governed-operations' own Redis records (`apphost:<prefix>governed-operations:<kind>:…`) that name this session. */
  const governedRecords = async (kind: 'view' | 'view-producer', sessionId: string): Promise<unknown[]> => {
    const keys = await redis.keys(`apphost:${prefix}governed-operations:${kind}:*`);
    const values = keys.length ? await redis.mget(...keys) : [];
    return values.flatMap((raw) => (raw && raw.includes(`"sessionId":"${sessionId}"`) ? [JSON.parse(raw) as unknown] : []));
  };

  beforeAll(async () => {
    nats = await startPrivateNats();
    providers = await startFakeProviders(nats.url, ['export-audit']);
    plane = await bootViewPlane(
      nats.url,
      prefix,
      { refs: ['refs'], small: ['small'], rerun: ['cold-rerun'], replay: ['cold-replay'] },
      {},
      { registryProcess: true },
    );
    if (!plane.registryProcess) throw new Error('the registry must run as its own process');
    owner = plane.registryProcess;
    http = viewHttp(plane);
    redis = new Redis(TEST_REDIS_URL);
    alice = await token('alice', 'runtime view');
    await putProfile(plane, 'p1', viewProfile());
    await putProfile(plane, 'p-small', viewProfile({ views: { maxDocumentBytes: 1024 } }));
    await putProfile(plane, 'p-replay', viewProfile({ replay: { tools: ['start-session'] } }));
    const states = await Promise.all([
      putToolset(plane, 'refs', fixtureSpec('stateful-nonce', 'p1')),
      putToolset(plane, 'small', publishedSpec('basicVanillaJs', 'p-small')),
      putToolset(plane, 'cold-rerun', fixtureSpec('stateful-nonce', 'p1')),
      putToolset(plane, 'cold-replay', fixtureSpec('stateful-nonce', 'p-replay')),
    ]);
    expect(states).toEqual(['PROFILE_BOUND', 'PROFILE_BOUND', 'PROFILE_BOUND', 'PROFILE_BOUND']);
  }, 150_000);

  afterAll(async () => {
    redis?.disconnect();
    await plane?.stop();
    await providers?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  it('two Views of one widget hold two view references on its generation; each close releases one, the last leaves it evictable', async () => {
    const ev = await sessionWithUiCall(http, alice, { appName: 'refs', sessionId: 'g-refs', tool: 'start-session' });
    const first = await open('refs', 'g-refs', ev);
    const second = await open('refs', 'g-refs', ev);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.viewId).not.toBe(first.body.viewId);
    const generation = await generationOf(first.body.viewId);
    expect(generation.ownerInstanceId).toBe(owner.instanceId);
    expect(await generationOf(second.body.viewId)).toEqual(generation);
    expect(await stateOf(generation)).toMatchObject({ references: 2, byHolderKind: { view: 2 }, evictable: false });

    expect((await http('DELETE', `/v1/views/${first.body.viewId}`, { bearer: alice })).status).toBe(204);
    expect(await stateOf(generation)).toMatchObject({ references: 1, byHolderKind: { view: 1 }, evictable: false });
    const renewed = await renew(second.body.viewId, second.body.grant);
    expect(renewed.status).toBe(200);
    expect((await getView(second.body.viewId)).body).toMatchObject({ state: 'ACTIVE' });

    expect((await http('DELETE', `/v1/views/${second.body.viewId}`, { bearer: alice })).status).toBe(204);
    expect(await stateOf(generation)).toEqual({ references: 0, byHolderKind: {}, inflight: 0, evictable: true });
  });

  it('a bootstrap that fails after the reservation (document over the profile limit: 413 DOCUMENT_TOO_LARGE) leaves no reference and no View', async () => {
    const ev = await sessionWithUiCall(http, alice, { appName: 'small', sessionId: 'g-small', tool: VANILLA.uiTool });
    const producers = (await governedRecords('view-producer', 'g-small')) as Array<{ generation: GenerationAddress & { toolsetId: string } }>;
    expect(producers).toHaveLength(1);
    const [producer] = producers;
    expect(producer.generation).toMatchObject({ toolsetId: 'small', ownerInstanceId: owner.instanceId });
    const generation = producer.generation;
    const before = await stateOf(generation);
    expect(before).toEqual({ references: 0, byHolderKind: {}, inflight: 0, evictable: true });

    const refused = await open('small', 'g-small', ev);
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { reason: 'DOCUMENT_TOO_LARGE', maxBytes: 1024 } });
    expect(refused.text).not.toContain('<html');
    expect(await stateOf(generation)).toEqual(before);
    expect(await governedRecords('view', 'g-small')).toEqual([]);
  });

  it('after the registry owner crashed and restarted, the old widget opens the GENERATION_GONE placeholder (rerun, or refresh when replay-safe); refresh opens a live View on a new generation', async () => {
    const rerunEv = await sessionWithUiCall(http, alice, { appName: 'rerun', sessionId: 'g-rerun', tool: 'start-session' });
    const replayEv = await sessionWithUiCall(http, alice, { appName: 'replay', sessionId: 'g-replay', tool: 'start-session' });
    const live = await open('replay', 'g-replay', replayEv);
    expect(live.status).toBe(201);
    const oldGeneration = await generationOf(live.body.viewId);
    expect(await stateOf(oldGeneration)).toMatchObject({ byHolderKind: { view: 1 } });

    await owner.kill();
    await owner.restart();
    // The restarted owner (same instance id, new incarnation) does not hold the old generation.
    expect(await expectAppError(stateOf(oldGeneration))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { reason: 'CONNECTION_GENERATION_GONE' },
    });

    // The View opened before the crash is revoked on its next read; its grant renews nothing.
    expect((await getView(live.body.viewId)).body).toMatchObject({ state: 'REVOKED', reason: 'GENERATION_GONE' });
    expect((await renew(live.body.viewId, live.body.grant)).body.error).toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { reason: 'VIEW_REVOKED', revocation: 'GENERATION_GONE' },
    });

    const rerun = await open('rerun', 'g-rerun', rerunEv);
    expect(rerun.status).toBe(200);
    expect(rerun.body).toEqual({
      mode: 'placeholder',
      viewId: expect.stringMatching(/^vw-[0-9a-f]{32}$/),
      reason: 'GENERATION_GONE',
      widget: expect.objectContaining({ eventId: rerunEv.eventId, toolsetId: 'cold-rerun' }),
      actions: [{ kind: 'rerun', tool: 'start-session', label: expect.any(String), warning: expect.any(String) }],
    });
    const notSafe = await http('POST', `/v1/views/${rerun.body.viewId}:refresh`, { bearer: alice, body: {} });
    expect(notSafe.status).toBe(400);
    expect(notSafe.body.error).toMatchObject({ details: { reason: 'REPLAY_NOT_SAFE' } });

    const cold = await open('replay', 'g-replay', replayEv);
    expect(cold.status).toBe(200);
    expect(cold.body).toMatchObject({
      mode: 'placeholder',
      reason: 'GENERATION_GONE',
      widget: expect.objectContaining({ eventId: replayEv.eventId, toolsetId: 'cold-replay' }),
      actions: [{ kind: 'refresh', tool: 'start-session', label: expect.any(String), warning: null }],
    });
    expect(cold.body).not.toHaveProperty('grant');

    const refreshed = await http('POST', `/v1/views/${cold.body.viewId}:refresh`, { bearer: alice, body: {} });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.event.eventId).toBeGreaterThan(replayEv.eventId);
    expect(refreshed.body.view).toMatchObject({ mode: 'live', grant: expect.any(String), widget: { eventId: refreshed.body.event.eventId } });
    const fresh = await generationOf(refreshed.body.view.viewId);
    expect(fresh.generationId).not.toBe(oldGeneration.generationId);
    expect(fresh.fence).toBeGreaterThan(oldGeneration.fence);
    expect(await stateOf(fresh)).toMatchObject({ byHolderKind: { view: 1 } });
    expect((await renew(refreshed.body.view.viewId, refreshed.body.view.grant)).status).toBe(200);
  });
});
