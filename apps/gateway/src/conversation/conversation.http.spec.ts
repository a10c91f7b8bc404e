import { BusServer, NatsTransport } from '@apphost/bus';
import {
  AppHostError,
  GovernedClaimMessage,
  GovernedGetModelContext,
  GovernedReasons,
  LifecycleConsumeMessage,
  LifecycleListMessages,
  LifecycleReasons,
  type PendingMessage,
  type ResponseOf,
  type SessionKey,
} from '@apphost/contracts';
import { startService, type RunningService } from '@apphost/runtime';
import { connectTestTransport, sleep, startPrivateNats, TEST_BUS_PREFIX, type PrivateNats } from '@apphost/testing';
import { SignJWT } from 'jose';
import pino from 'pino';
import { gatewayService } from '../service';

/**
 * The conversation routes over HTTP against stand-ins of governed-operations and lifecycle-store on this suite's own
 * NATS: what the gateway resolves and sends (session key, acting principal, the long poll's wait and deadline), what
 * it answers (public messages, the claim token only in the claim's answer, statuses 200/400/401/403/404/409), and
 * that every route is in the OpenAPI document.
 */
const JWT = { issuer: 'https://issuer.conversation-http', audience: 'apphost-conversation-http', secret: 'a-conversation-http-secret-of-at-least-32-bytes' };
const MESSAGE = `msg-${'a'.repeat(32)}`;
const CLAIMED_BY_OTHER = `msg-${'c'.repeat(32)}`;
const REJECTED = `msg-${'d'.repeat(32)}`;
const ABSENT = `msg-${'e'.repeat(32)}`;
const TOKEN = 'T'.repeat(21) + '_conversation-claim-01'; // 43 base64url characters
const BUS_TIMEOUT_MS = 400;

const sign = (sub: string, scope: string) =>
  new SignJWT({ tenant: 'acme', scope })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(JWT.issuer)
    .setAudience(JWT.audience)
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(JWT.secret));

const pending = (session: SessionKey, state: PendingMessage['state'], extra: Partial<PendingMessage> = {}): PendingMessage => ({
  messageId: MESSAGE,
  session,
  incarnation: 1,
  state,
  role: 'user',
  content: [{ type: 'text', text: 'the job finished: summarize it' }],
  viewId: `vw-${'b'.repeat(32)}`,
  widgetId: '7:call-1',
  nonce: 'f'.repeat(32),
  toolsetId: 'secret-toolset',
  bindingRevision: 'secret-revision',
  bindingGeneration: 3,
  principal: { tenant: 'acme', subject: 'secret-opener' },
  rejection: null,
  claimExpiresAt: null,
  invocationId: null,
  createdAt: new Date(0).toISOString(),
  updatedAt: new Date(0).toISOString(),
  ...extra,
});

let nats: PrivateNats;
let gateway: RunningService;
let gatewayTransport: NatsTransport;
let standInTransport: NatsTransport;
let standIns: BusServer;
let base: string;
const seen: { op: string; payload: Record<string, unknown>; remainingMs?: number }[] = [];

beforeAll(async () => {
  nats = await startPrivateNats();
  standInTransport = await connectTestTransport('conversation-stand-ins', { natsUrl: nats.url });
  standIns = new BusServer({
    transport: standInTransport,
    instanceId: 'stand-ins',
    queueGroup: 'conversation-stand-ins',
    logger: { error: () => undefined, warn: () => undefined },
  });
  standIns.register(GovernedGetModelContext, (r): ResponseOf<typeof GovernedGetModelContext> => {
    seen.push({ op: 'model-context', payload: r });
    if (r.session.sessionId === 'gone') throw new AppHostError('NOT_FOUND', 'session not found');
    return {
      block: { role: 'user', content: [{ type: 'text', text: '[MCP App context — widget 7:call-1, view vw-b]\n{"progress":1}' }] },
      registers: [{ widgetId: '7:call-1', viewId: `vw-${'b'.repeat(32)}`, commitSequence: 4, bytes: 14 }],
      evicted: ['6:call-0'],
    };
  });
  standIns.register(LifecycleListMessages, async (r, context) => {
    seen.push({ op: 'list', payload: r, remainingMs: context.deadline === undefined ? undefined : context.deadline - Date.now() });
    // The store's long poll, as the contract says: the answer comes when the wait passed (nothing matched here).
    if (r.waitMs > 0) {
      await sleep(r.waitMs);
      return { incarnation: 1, messages: [] };
    }
    return { incarnation: 1, messages: [pending(r.session, 'ACCEPTED')] };
  });
  standIns.register(GovernedClaimMessage, (r) => {
    seen.push({ op: 'claim', payload: r });
    if (r.messageId === CLAIMED_BY_OTHER) throw new AppHostError('CONFLICT', 'message claimed', { details: LifecycleReasons.details('MESSAGE_CLAIMED') });
    if (r.messageId === REJECTED)
      throw new AppHostError('FAILED_PRECONDITION', 'message rejected', {
        details: { ...GovernedReasons.details('MESSAGE_REJECTED'), rejection: 'TOOLSET_REVOKED' },
      });
    if (r.messageId === ABSENT) throw new AppHostError('NOT_FOUND', 'message not found');
    const claimExpiresAt = new Date(Date.now() + r.claimTtlMs).toISOString();
    return { message: pending(r.session, 'CLAIMED', { claimExpiresAt }), claimToken: TOKEN, claimExpiresAt };
  });
  standIns.register(LifecycleConsumeMessage, (r) => {
    seen.push({ op: 'consume', payload: r });
    if (r.invocationId === 'inv-other') throw new AppHostError('CONFLICT', 'claim invalid', { details: LifecycleReasons.details('MESSAGE_CLAIM_INVALID') });
    return { message: pending(r.session, 'CONSUMED', { invocationId: r.invocationId }) };
  });
  standIns.start();
  await standIns.ready();

  gatewayTransport = await connectTestTransport('gateway', { natsUrl: nats.url });
  gateway = await startService(gatewayService, {
    env: {
      AUTH_MODE: 'jwt',
      AUTH_JWT_ISSUER: JWT.issuer,
      AUTH_JWT_AUDIENCE: JWT.audience,
      AUTH_JWT_HS256_SECRET: JWT.secret,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      BUS_SUBJECT_PREFIX: TEST_BUS_PREFIX,
      // Shorter than the long polls below: their bus request must outlast the wait on its own timeout.
      BUS_TIMEOUT_MS: String(BUS_TIMEOUT_MS),
    },
    transport: gatewayTransport,
    http: true,
    processMetrics: false,
    logger: pino({ level: 'silent' }),
  });
  base = String(gateway.url).replace('[::1]', '127.0.0.1');
}, 30_000);

afterAll(async () => {
  await gateway?.close();
  await gatewayTransport?.close();
  await standIns?.stop(100);
  await standInTransport?.close();
  await nats?.stop();
});

beforeEach(() => {
  seen.length = 0;
});

async function call(
  route: string,
  { method = 'GET', body, bearer, headers = {} }: { method?: string; body?: unknown; bearer?: string; headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> & { error: Record<string, unknown> },
  };
}

const ALICE_SESSION = { tenant: 'acme', appName: 'app', userId: 'alice', sessionId: 's1' };
const INTERNALS = ['session', 'toolsetId', 'bindingRevision', 'bindingGeneration', 'principal'];

describe('gateway conversation routes', () => {
  let runtime: string;
  let viewer: string;
  let delegate: string;

  beforeAll(async () => {
    [runtime, viewer, delegate] = await Promise.all([sign('alice', 'runtime'), sign('alice', 'view'), sign('svc-runtime', 'runtime delegate')]);
  });

  it('GET model-context answers what governed-operations computed for the own session, never cached', async () => {
    const res = await call('/v1/sessions/s1/model-context?appName=app', { bearer: runtime });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      block: { role: 'user', content: [{ type: 'text', text: expect.stringContaining('[MCP App context — widget 7:call-1') }] },
      registers: [{ widgetId: '7:call-1', viewId: `vw-${'b'.repeat(32)}`, commitSequence: 4, bytes: 14 }],
      evicted: ['6:call-0'],
    });
    expect(seen).toEqual([{ op: 'model-context', payload: { session: ALICE_SESSION } }]);
    expect((await call('/v1/sessions/gone/model-context?appName=app', { bearer: runtime })).status).toBe(404);
  });

  it('every route needs a token with the runtime scope (a view token never reads or takes the conversation)', async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/v1/sessions/s1/model-context?appName=app'],
      ['GET', '/v1/sessions/s1/messages?appName=app'],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}:claim`, { appName: 'app' }],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}:consume`, { appName: 'app', claimToken: TOKEN, invocationId: 'inv-1' }],
    ];
    for (const [method, route, body] of routes) {
      expect([method, route, (await call(route, { method, body })).status]).toEqual([method, route, 401]);
      expect([method, route, (await call(route, { method, body, bearer: viewer })).status]).toEqual([method, route, 403]);
    }
    expect(seen).toEqual([]);
  });

  it("another user's session is 404 with nothing sent, unless a delegate names that user", async () => {
    expect((await call('/v1/sessions/s1/model-context?appName=app&userId=bob', { bearer: runtime })).status).toBe(404);
    expect((await call('/v1/sessions/s1/messages?appName=app&userId=bob', { bearer: runtime })).status).toBe(404);
    expect((await call(`/v1/sessions/s1/messages/${MESSAGE}:claim`, { method: 'POST', bearer: runtime, body: { appName: 'app', userId: 'bob' } })).status).toBe(
      404,
    );
    const consume = { appName: 'app', userId: 'bob', claimToken: TOKEN, invocationId: 'inv-1' };
    expect((await call(`/v1/sessions/s1/messages/${MESSAGE}:consume`, { method: 'POST', bearer: runtime, body: consume })).status).toBe(404);
    expect(seen).toEqual([]);

    expect((await call('/v1/sessions/s1/model-context?appName=app&userId=bob', { bearer: delegate })).status).toBe(200);
    expect(
      (await call(`/v1/sessions/s1/messages/${MESSAGE}:claim`, { method: 'POST', bearer: delegate, body: { appName: 'app', userId: 'bob' } })).status,
    ).toBe(200);
    const bob = { ...ALICE_SESSION, userId: 'bob' };
    expect(seen.map((s) => s.payload)).toEqual([
      { session: bob },
      // The claim re-checks as the user the delegate acts for: its scopes without `delegate`.
      { principal: { tenant: 'acme', subject: 'bob', scopes: ['runtime'] }, session: bob, messageId: MESSAGE, claimTtlMs: 60_000 },
    ]);
  });

  it('validates every input before anything is sent', async () => {
    const bad: [string, string, unknown?][] = [
      ['GET', '/v1/sessions/s1/model-context'],
      ['GET', '/v1/sessions/s1/model-context?appName=app&extra=1'],
      ['GET', '/v1/sessions/s1/messages?appName=app&state=RECORDED'],
      ['GET', '/v1/sessions/s1/messages?appName=app&state=accepted'],
      ['GET', '/v1/sessions/s1/messages?appName=app&waitMs=30001'],
      ['GET', '/v1/sessions/s1/messages?appName=app&waitMs=-1'],
      ['GET', '/v1/sessions/s1/messages?appName=app&waitMs=soon'],
      ['GET', '/v1/sessions/s1/messages?appName=app&limit=101'],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}:explode`, { appName: 'app' }],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}`, { appName: 'app' }],
      ['POST', '/v1/sessions/s1/messages/msg-xyz:claim', { appName: 'app' }],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}:claim`, {}],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}:claim`, { appName: 'app', claimTtlMs: 999 }],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}:claim`, { appName: 'app', claimTtlMs: 3_600_001 }],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}:claim`, { appName: 'app', claimToken: TOKEN }],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}:consume`, { appName: 'app', claimToken: TOKEN }],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}:consume`, { appName: 'app', claimToken: 'short', invocationId: 'inv-1' }],
      ['POST', `/v1/sessions/s1/messages/${MESSAGE}:consume`, { appName: 'app', claimToken: TOKEN, invocationId: '' }],
    ];
    for (const [method, route, body] of bad) {
      const res = await call(route, { method, body, bearer: runtime });
      expect([method, route, body, res.status, res.body.error.code]).toEqual([method, route, body, 400, 'INVALID_ARGUMENT']);
    }
    expect(seen).toEqual([]);
  });

  it('GET messages lists public messages: identity, content and state, never the binding, the opener or a claim token', async () => {
    const res = await call('/v1/sessions/s1/messages?appName=app&state=ACCEPTED', { bearer: runtime });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ sessionId: 's1', appName: 'app', userId: 'alice', incarnation: 1 });
    const [message] = res.body.messages as Record<string, unknown>[];
    expect(message).toMatchObject({
      messageId: MESSAGE,
      state: 'ACCEPTED',
      widgetId: '7:call-1',
      nonce: 'f'.repeat(32),
      content: [{ type: 'text', text: expect.any(String) }],
    });
    for (const key of INTERNALS) expect(message).not.toHaveProperty(key);
    expect(res.text).not.toContain('secret-');
    expect(seen.map((s) => s.payload)).toEqual([{ session: ALICE_SESSION, state: 'ACCEPTED', waitMs: 0, limit: 50 }]);
  });

  it('a long poll outlasts the bus default: its request deadline exceeds the wait, and an empty page is 200', async () => {
    const started = Date.now();
    const res = await call('/v1/sessions/s1/messages?appName=app&state=ACCEPTED&waitMs=1200&limit=5', { bearer: runtime });
    expect(res.status).toBe(200);
    expect(res.body.messages).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1200);
    expect(seen).toEqual([{ op: 'list', payload: { session: ALICE_SESSION, state: 'ACCEPTED', waitMs: 1200, limit: 5 }, remainingMs: expect.any(Number) }]);
    expect(seen[0].remainingMs).toBeGreaterThan(1200 + BUS_TIMEOUT_MS);
  }, 10_000);

  it('a request deadline shorter than the wait shortens the wait, so the poll still answers 200 (not 504)', async () => {
    const res = await call('/v1/sessions/s1/messages?appName=app&waitMs=30000', { bearer: runtime, headers: { 'x-apphost-timeout-ms': '3500' } });
    expect(res.status).toBe(200);
    const [{ payload, remainingMs }] = seen;
    expect(payload.waitMs).toBeGreaterThan(0);
    expect(payload.waitMs).toBeLessThanOrEqual(1500);
    expect(remainingMs).toBeGreaterThan(payload.waitMs as number);
  }, 10_000);

  it(':claim passes the principal and the ttl and answers the message with its claim token', async () => {
    const res = await call(`/v1/sessions/s1/messages/${MESSAGE}:claim`, { method: 'POST', bearer: runtime, body: { appName: 'app', claimTtlMs: 5_000 } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      message: expect.objectContaining({ messageId: MESSAGE, state: 'CLAIMED' }),
      claimToken: TOKEN,
      claimExpiresAt: expect.any(String),
    });
    for (const key of INTERNALS) expect(res.body.message).not.toHaveProperty(key);
    expect(seen.map((s) => s.payload)).toEqual([
      { principal: { tenant: 'acme', subject: 'alice', scopes: ['runtime'] }, session: ALICE_SESSION, messageId: MESSAGE, claimTtlMs: 5_000 },
    ]);
  });

  it(':claim maps the typed refusals: 409 MESSAGE_CLAIMED, 400 MESSAGE_REJECTED, 404', async () => {
    const claim = (id: string) => call(`/v1/sessions/s1/messages/${id}:claim`, { method: 'POST', bearer: runtime, body: { appName: 'app' } });
    const lost = await claim(CLAIMED_BY_OTHER);
    expect([lost.status, lost.body.error]).toEqual([409, expect.objectContaining({ code: 'CONFLICT', details: { reason: 'MESSAGE_CLAIMED' } })]);
    const rejected = await claim(REJECTED);
    expect([rejected.status, rejected.body.error]).toEqual([
      400,
      expect.objectContaining({ code: 'FAILED_PRECONDITION', details: { reason: 'MESSAGE_REJECTED', rejection: 'TOOLSET_REVOKED' } }),
    ]);
    expect((await claim(ABSENT)).status).toBe(404);
    expect(lost.text + rejected.text).not.toContain(TOKEN);
  });

  it(':consume sends the token and the invocation; answers the consumed message without the token; a foreign claim is 409', async () => {
    const res = await call(`/v1/sessions/s1/messages/${MESSAGE}:consume`, {
      method: 'POST',
      bearer: runtime,
      body: { appName: 'app', claimToken: TOKEN, invocationId: 'inv-msg-1' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.objectContaining({ messageId: MESSAGE, state: 'CONSUMED', invocationId: 'inv-msg-1' }) });
    expect(res.text).not.toContain(TOKEN);
    expect(seen.map((s) => s.payload)).toEqual([{ session: ALICE_SESSION, messageId: MESSAGE, claimToken: TOKEN, invocationId: 'inv-msg-1' }]);

    const foreign = await call(`/v1/sessions/s1/messages/${MESSAGE}:consume`, {
      method: 'POST',
      bearer: runtime,
      body: { appName: 'app', claimToken: TOKEN, invocationId: 'inv-other' },
    });
    expect([foreign.status, foreign.body.error]).toEqual([409, expect.objectContaining({ code: 'CONFLICT', details: { reason: 'MESSAGE_CLAIM_INVALID' } })]);
  });

  it('documents every conversation route in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    expect(Object.keys(doc.paths['/v1/sessions/{sessionId}/model-context'])).toEqual(['get']);
    expect(Object.keys(doc.paths['/v1/sessions/{sessionId}/messages'])).toEqual(['get']);
    expect(Object.keys(doc.paths['/v1/sessions/{sessionId}/messages/{messageId}'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/v1/sessions/{sessionId}/messages/{messageId}'].post.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404', '409']),
    );
    for (const route of ['/v1/sessions/{sessionId}/model-context', '/v1/sessions/{sessionId}/messages'])
      expect(Object.keys(doc.paths[route].get.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404']));
  });
});
