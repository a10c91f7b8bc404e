import { decodeJwt, SignJWT } from 'jose';
import { BusServer, type NatsTransport } from '@apphost/bus';
import {
  AppHostError,
  CatalogModelCatalog,
  GovernedDecideConfirmation,
  GovernedRunToolBatch,
  LifecycleCreateSession,
  LifecycleGetSession,
  LifecycleListEvents,
  type Principal,
  type SessionKey,
  type SessionSnapshot,
} from '@apphost/contracts';
import { bootService, connectTestTransport, uniquePrefix, type ServiceUnderTest } from '@apphost/testing';
import { ViewTokens } from '../auth/view-tokens';
import { gatewayService } from '../service';

// The gateway in jwt mode, so each test signs the principal it needs; stand-ins of the services behind the routes
// answer on this file's bus namespace and record what the gateway asked.
const ISSUER = 'https://issuer.test';
const AUDIENCE = 'apphost';
const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long!';
const VIEW_SECRET = Buffer.alloc(32, 0x5a);

const sign = (subject: string, scope: string) =>
  new SignJWT({ tenant: 'acme', scope })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(subject)
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));

const keyId = (k: SessionKey) => `${k.tenant}/${k.appName}/${k.userId}/${k.sessionId}`;
const sessions = new Map<string, SessionSnapshot['state']>([
  ['acme/dash/alice/s1', 'ACTIVE'],
  ['acme/dash/alice/s-deleting', 'DELETING'],
  ['acme/dash/alice/s-deleted', 'DELETED'],
  ['acme/dash/bob/s2', 'ACTIVE'],
]);
const asked: { op: string; session: SessionKey; principal?: Principal }[] = [];
// bob's s2 was deleted and created again twice: a view token is for the incarnation it was minted in.
const incarnations = new Map([['acme/dash/bob/s2', 3]]);

const snapshot = (session: SessionKey, state: SessionSnapshot['state']): SessionSnapshot => ({
  session,
  incarnation: 1,
  state,
  version: 1,
  adopted: false,
  updatedAt: new Date(0).toISOString(),
  cascade: null,
});

let gateway: ServiceUnderTest;
let standInTransport: NatsTransport;
let standIns: BusServer;
let base: string;
let alice: string;
let runtime: string;

beforeAll(async () => {
  standInTransport = await connectTestTransport('stand-ins');
  standIns = new BusServer({
    transport: standInTransport,
    instanceId: 'stand-ins',
    queueGroup: 'stand-ins',
    logger: { error: () => undefined, warn: () => undefined },
  });
  standIns.register(LifecycleCreateSession, (r) => {
    asked.push({ op: 'create', session: r.session });
    sessions.set(keyId(r.session), 'ACTIVE');
    return snapshot(r.session, 'ACTIVE');
  });
  standIns.register(LifecycleGetSession, (r) => {
    asked.push({ op: 'get', session: r.session });
    const state = sessions.get(keyId(r.session));
    if (!state) throw new AppHostError('NOT_FOUND', 'session not found');
    return { ...snapshot(r.session, state), incarnation: incarnations.get(keyId(r.session)) ?? 1 };
  });
  standIns.register(LifecycleListEvents, (r) => (asked.push({ op: 'events', session: r.session }), { incarnation: 1, events: [], nextAfterId: null }));
  standIns.register(CatalogModelCatalog, (r) => {
    asked.push({ op: 'catalog', session: r.session.key, principal: r.principal });
    return { tools: [], excluded: [], unavailable: [], cached: false, composedAt: new Date(0).toISOString() };
  });
  standIns.register(GovernedRunToolBatch, (r) => {
    asked.push({ op: 'batch', session: r.session, principal: r.principal });
    return {
      eventId: 1,
      incarnation: 1,
      rejection: null,
      functionResponses: [{ functionCallId: 'c1', name: 'echo', response: { ok: true } }],
      widgets: [],
      confirmations: [],
    };
  });
  standIns.register(GovernedDecideConfirmation, (r) => {
    asked.push({ op: 'decide', session: r.session, principal: r.principal });
    return {
      eventId: 2,
      incarnation: 1,
      rejection: null,
      functionResponses: [{ functionCallId: 'c1', name: 'echo', response: { ok: true } }],
      widgets: [],
      confirmations: [],
    };
  });
  standIns.start();
  await standIns.ready();

  gateway = await bootService(gatewayService, uniquePrefix(), {
    AUTH_MODE: 'jwt',
    AUTH_JWT_ISSUER: ISSUER,
    AUTH_JWT_AUDIENCE: AUDIENCE,
    AUTH_JWT_HS256_SECRET: SECRET,
    GATEWAY_VIEW_TOKEN_SECRET: VIEW_SECRET.toString('base64'),
  });
  base = String(gateway.running.url).replace('[::1]', '127.0.0.1');
  alice = await sign('alice', 'runtime');
  runtime = await sign('svc-runtime', 'runtime delegate');
}, 30_000);

afterAll(async () => {
  await gateway?.stop();
  await standIns?.stop(100);
  await standInTransport?.close();
});

beforeEach(() => {
  asked.length = 0;
});

async function call(method: string, route: string, token: string, body?: unknown) {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const batch = (userId?: string) => ({
  appName: 'dash',
  ...(userId ? { userId } : {}),
  invocationId: 'inv-1',
  calls: [{ functionCallId: 'c1', tool: 'echo', arguments: {} }],
});
const bob = { tenant: 'acme', appName: 'dash', userId: 'bob', sessionId: 's2' };
const CONFIRMATION = `cf-${'0'.repeat(32)}`;

describe('delegation: a principal with scope delegate acts for a user of its tenant', () => {
  it('names the user on the session, events, catalog, tool-batch and confirmation routes, and the services see that user', async () => {
    expect(await call('GET', '/v1/sessions/s2?appName=dash&userId=bob', runtime)).toEqual({
      status: 200,
      body: { sessionId: 's2', appName: 'dash', userId: 'bob', incarnation: 3, state: 'ACTIVE' },
    });
    expect(await call('GET', '/v1/sessions/s2/events?appName=dash&userId=bob', runtime)).toMatchObject({ status: 200, body: { userId: 'bob', events: [] } });
    expect(await call('GET', '/v1/sessions/s2/catalog?appName=dash&userId=bob', runtime)).toMatchObject({ status: 200, body: { sessionId: 's2', tools: [] } });
    expect(await call('POST', '/v1/sessions/s2/tool-batches', runtime, batch('bob'))).toMatchObject({ status: 200, body: { eventId: 1 } });
    expect(await call('POST', `/v1/sessions/s2/confirmations/${CONFIRMATION}`, runtime, { appName: 'dash', userId: 'bob', confirmed: true })).toMatchObject({
      status: 200,
      body: { eventId: 2 },
    });
    expect(await call('POST', '/v1/sessions', runtime, { appName: 'dash', sessionId: 's-carol', userId: 'carol' })).toMatchObject({
      status: 201,
      body: { sessionId: 's-carol', userId: 'carol' },
    });
    // Connections, permits and caches downstream are the user's, never shared between the users of one runtime.
    const forBob = { tenant: 'acme', subject: 'bob', scopes: ['runtime'] };
    expect(asked).toEqual([
      { op: 'get', session: bob },
      { op: 'events', session: bob },
      { op: 'get', session: bob },
      { op: 'catalog', session: bob, principal: forBob },
      { op: 'batch', session: bob, principal: forBob },
      { op: 'decide', session: bob, principal: forBob },
      { op: 'create', session: { tenant: 'acme', appName: 'dash', userId: 'carol', sessionId: 's-carol' } },
    ]);
  });

  it('without delegate, naming another user reads as 404 and nothing is asked', async () => {
    expect((await call('GET', '/v1/sessions/s2?appName=dash&userId=bob', alice)).status).toBe(404);
    expect((await call('GET', '/v1/sessions/s2/events?appName=dash&userId=bob', alice)).status).toBe(404);
    expect((await call('GET', '/v1/sessions/s2/catalog?appName=dash&userId=bob', alice)).status).toBe(404);
    expect((await call('POST', '/v1/sessions/s2/tool-batches', alice, batch('bob'))).status).toBe(404);
    expect((await call('POST', `/v1/sessions/s2/confirmations/${CONFIRMATION}`, alice, { appName: 'dash', userId: 'bob', confirmed: true })).status).toBe(404);
    expect((await call('POST', '/v1/sessions/s2/view-tokens', alice, { appName: 'dash', userId: 'bob' })).status).toBe(404);
    expect(asked).toEqual([]);
    // Its own session, by name or by default, as before; the services see the caller itself.
    expect((await call('POST', '/v1/sessions/s1/tool-batches', alice, batch())).status).toBe(200);
    expect(asked).toEqual([
      { op: 'batch', session: { ...bob, userId: 'alice', sessionId: 's1' }, principal: { tenant: 'acme', subject: 'alice', scopes: ['runtime'] } },
    ]);
  });
});

describe('POST /v1/sessions/{id}/view-tokens', () => {
  const restrictedTo = (sessionId: string, incarnation = 1) => ({ appName: 'dash', sessionId, incarnation });

  it("mints a 5-minute view-only token for the session's own user", async () => {
    const before = Date.now();
    const res = await call('POST', '/v1/sessions/s1/view-tokens', alice, { appName: 'dash' });
    expect(res).toEqual({ status: 201, body: { token: expect.any(String), expiresAt: expect.any(String), scope: 'view', sessionId: 's1', appName: 'dash' } });
    const expiresIn = Date.parse(res.body['expiresAt'] as string) - before;
    expect(expiresIn).toBeGreaterThan(298_000);
    expect(expiresIn).toBeLessThanOrEqual(300_000);
    expect(decodeJwt(res.body['token'] as string)).toMatchObject({ iss: 'apphost-gateway', aud: 'apphost-view', sub: 'alice', scope: 'view' });
    // Signed with GATEWAY_VIEW_TOKEN_SECRET: another replica holding it accepts the token.
    await expect(new ViewTokens({ secret: VIEW_SECRET }).verify(res.body['token'] as string)).resolves.toEqual({
      tenant: 'acme',
      subject: 'alice',
      scopes: ['view'],
      restrictedTo: restrictedTo('s1'),
    });
    expect(asked).toEqual([{ op: 'get', session: { ...bob, userId: 'alice', sessionId: 's1' } }]);
  });

  it("mints for a delegate naming the session's user: the token is that user's, for that session", async () => {
    const res = await call('POST', '/v1/sessions/s2/view-tokens', runtime, { appName: 'dash', userId: 'bob', ttlSeconds: 900 });
    expect(res.status).toBe(201);
    const claims = decodeJwt(res.body['token'] as string);
    expect(claims).toMatchObject({ sub: 'bob', tenant: 'acme', app: 'dash', sid: 's2', inc: 3 });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(900);
    await expect(new ViewTokens({ secret: VIEW_SECRET }).verify(res.body['token'] as string)).resolves.toMatchObject({
      subject: 'bob',
      restrictedTo: restrictedTo('s2', 3),
    });
    // Naming a user the session does not belong to finds nothing.
    expect((await call('POST', '/v1/sessions/s2/view-tokens', runtime, { appName: 'dash', userId: 'alice' })).status).toBe(404);
  });

  it('refuses a lifetime over 15 minutes and unknown fields before asking anything', async () => {
    for (const body of [{ appName: 'dash', ttlSeconds: 901 }, { appName: 'dash', ttlSeconds: 0 }, { appName: 'dash', scope: 'runtime' }, {}]) {
      expect(await call('POST', '/v1/sessions/s1/view-tokens', alice, body)).toMatchObject({ status: 400, body: { error: { code: 'INVALID_ARGUMENT' } } });
    }
    expect(asked).toEqual([]);
  });

  it.each([
    ['absent', 's-missing'],
    ['DELETING', 's-deleting'],
    ['DELETED', 's-deleted'],
  ])('answers 404 when the session is %s, minting nothing', async (_state, sessionId) => {
    const res = await call('POST', `/v1/sessions/${sessionId}/view-tokens`, alice, { appName: 'dash' });
    expect(res).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND', message: 'session not found' } } });
    expect(res.body).not.toHaveProperty('token');
  });

  it('a view token is verified (403, not 401), but cannot mint another or call any runtime route', async () => {
    const { token } = (await call('POST', '/v1/sessions/s1/view-tokens', alice, { appName: 'dash' })).body as { token: string };
    asked.length = 0;
    for (const [method, route, body] of [
      ['POST', '/v1/sessions/s1/view-tokens', { appName: 'dash' }],
      ['GET', '/v1/sessions/s1?appName=dash', undefined],
      ['GET', '/v1/sessions/s1/events?appName=dash', undefined],
      ['POST', '/v1/sessions/s1/tool-batches', batch()],
      ['POST', '/v1/principals:revoke', { tenant: 'acme', subject: 'bob' }],
    ] as const) {
      const res = await call(method, route, token, body);
      expect(res.status).toBe(403);
      expect(res.body['error']).toMatchObject({ code: 'PERMISSION_DENIED' });
    }
    expect(asked).toEqual([]);
  });

  it('a view token is 401 when expired or tampered with', async () => {
    const minted = await new ViewTokens({ secret: VIEW_SECRET, now: () => Date.now() - 20 * 60_000 }).mint({
      tenant: 'acme',
      userId: 'alice',
      appName: 'dash',
      sessionId: 's1',
      incarnation: 1,
    });
    expect(await call('GET', '/v1/sessions/s1?appName=dash', minted.token)).toEqual({
      status: 401,
      body: { error: { code: 'UNAUTHENTICATED', message: 'token expired', retryable: false } },
    });

    const { token } = (await call('POST', '/v1/sessions/s1/view-tokens', alice, { appName: 'dash' })).body as { token: string };
    const [header, , signature] = token.split('.');
    const widened = Buffer.from(JSON.stringify({ ...decodeJwt(token), scope: 'view runtime', sid: 's2' })).toString('base64url');
    const res = await call('GET', '/v1/sessions/s1?appName=dash', `${header}.${widened}.${signature}`);
    expect(res).toMatchObject({ status: 401, body: { error: { code: 'UNAUTHENTICATED', message: 'token signature invalid' } } });
  });
});

describe('OpenAPI', () => {
  it('documents the view-token route and what userId means for a delegate', async () => {
    type Operation = { parameters?: { name: string; description?: string }[]; responses: Record<string, unknown>; requestBody?: unknown };
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const mint = doc.paths['/v1/sessions/{sessionId}/view-tokens']['post'];
    expect(Object.keys(mint.responses).sort()).toEqual(['201', '400', '401', '403', '404', '503']);
    expect(JSON.stringify(mint.requestBody)).toContain('ttlSeconds');
    const userId = doc.paths['/v1/sessions/{sessionId}']['get'].parameters?.find((p) => p.name === 'userId');
    expect(userId?.description).toContain('`delegate`');
    expect(doc.paths['/v1/sessions/{sessionId}/catalog']['get'].parameters?.find((p) => p.name === 'userId')?.description).toContain('`delegate`');
    expect(JSON.stringify(doc.paths['/v1/sessions/{sessionId}/tool-batches'])).toContain('`delegate`');
  });
});
