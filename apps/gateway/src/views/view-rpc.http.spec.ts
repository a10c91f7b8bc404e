import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { BusServer, NatsTransport } from '@apphost/bus';
import { AppHostError, GovernedReasons, GovernedViewRpc, jsonRpcCodeOf, type RequestOf, type ResponseOf } from '@apphost/contracts';
import { startService, type RunningService } from '@apphost/runtime';
import { connectTestTransport, startPrivateNats, TEST_BUS_PREFIX, type PrivateNats } from '@apphost/testing';
import { SignJWT } from 'jose';
import pino from 'pino';
import { VIEW_RPC_MAX_BODY_BYTES } from '../gateway.config';
import { gatewayService } from '../service';

/**
 * `POST /v1/views/{viewId}/rpc` over HTTP against a stand-in governed-operations on this suite's own NATS: what the
 * gateway refuses itself (token, scope, Origin, grant: HTTP envelopes; a body that is not JSON: the JSON-RPC parse
 * error), what it forwards (the caller, the message as parsed, its raw size, the attestation, the route's deadline),
 * and how each answer kind maps to a status.
 */
const JWT = { issuer: 'https://issuer.view-rpc-http', audience: 'apphost-view-rpc-http', secret: 'a-view-rpc-http-secret-that-is-at-least-32-bytes' };
const ORIGIN = 'https://host.view-rpc-http.example';
const GRANT = 'R'.repeat(20) + '_view-rpc-http-grant-01'; // 43 base64url characters
const VIEW = `vw-${'b'.repeat(32)}`;
const FOREIGN_VIEW = `vw-${'f'.repeat(32)}`;
const RPC_TIMEOUT_MS = 45_000;
const HTTP_TIMEOUT_MS = 3_000;

const sign = (sub: string, scope: string) =>
  new SignJWT({ tenant: 'acme', scope })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(JWT.issuer)
    .setAudience(JWT.audience)
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(JWT.secret));

type RpcRequest = RequestOf<typeof GovernedViewRpc>;
let nats: PrivateNats;
let gateway: RunningService;
let gatewayTransport: NatsTransport;
let governedTransport: NatsTransport;
let governed: BusServer;
let base: string;
let logText = '';
const seen: { request: RpcRequest; remainingMs: number }[] = [];

/** The stand-in's answers, chosen by the message's method (what governed-operations would decide). */
function answerOf(request: RpcRequest): ResponseOf<typeof GovernedViewRpc> {
  if (request.viewId === FOREIGN_VIEW) throw new AppHostError('NOT_FOUND', 'view not found');
  if (request.grant !== GRANT) throw new AppHostError('PERMISSION_DENIED', 'wrong grant', { details: GovernedReasons.details('VIEW_GRANT_INVALID') });
  const message = request.message as { id?: number; method?: string } | unknown[];
  if (Array.isArray(message)) {
    const data = { code: 'INVALID_ARGUMENT' as const, reason: 'RPC_INVALID_REQUEST', retryable: false };
    return {
      kind: 'response',
      response: { jsonrpc: '2.0', id: null, error: { code: jsonRpcCodeOf(data.code, data.reason), message: 'a batch is not served', data } },
    };
  }
  if (message.method === 'notifications/message') return { kind: 'accepted' };
  if (message.method === 'tools/call' && message.id === 99) return { kind: 'cancelled' };
  return { kind: 'response', response: { jsonrpc: '2.0', id: message.id ?? 0, result: { echoed: message.method ?? null } } };
}

beforeAll(async () => {
  nats = await startPrivateNats();
  governedTransport = await connectTestTransport('fake-governed-rpc', { natsUrl: nats.url });
  governed = new BusServer({
    transport: governedTransport,
    instanceId: 'fake-governed-rpc',
    queueGroup: 'governed-operations',
    logger: { error: () => undefined, warn: () => undefined },
  });
  governed.register(GovernedViewRpc, (request, context) => {
    seen.push({ request, remainingMs: (context.deadline ?? 0) - Date.now() });
    return answerOf(request);
  });
  governed.start();
  await governed.ready();

  gatewayTransport = await connectTestTransport('gateway-rpc', { natsUrl: nats.url });
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => ((logText += chunk.toString()), done()) });
  gateway = await startService(gatewayService, {
    env: {
      AUTH_MODE: 'jwt',
      AUTH_JWT_ISSUER: JWT.issuer,
      AUTH_JWT_AUDIENCE: JWT.audience,
      AUTH_JWT_HS256_SECRET: JWT.secret,
      AUTH_ORIGIN_ALLOWLIST: ORIGIN,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      BUS_SUBJECT_PREFIX: TEST_BUS_PREFIX,
      HTTP_REQUEST_TIMEOUT_MS: String(HTTP_TIMEOUT_MS),
      GATEWAY_VIEW_RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
    },
    transport: gatewayTransport,
    http: true,
    processMetrics: false,
    logger: pino({ level: 'trace' }, sink),
  });
  base = String(gateway.url).replace('[::1]', '127.0.0.1');
}, 30_000);

afterAll(async () => {
  await gateway?.close();
  await gatewayTransport?.close();
  await governed?.stop(100);
  await governedTransport?.close();
  await nats?.stop();
});

beforeEach(() => {
  seen.length = 0;
});

interface Post {
  /** Sent as is (a string or bytes); anything else as JSON. */
  body?: unknown;
  bearer?: string | null;
  origin?: string | null;
  grant?: string | null;
  headers?: Record<string, string>;
  viewId?: string;
  query?: string;
}
let viewer: string;
async function rpc({ body, bearer = viewer, origin = ORIGIN, grant = GRANT, headers = {}, viewId = VIEW, query = '' }: Post = {}) {
  const raw = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  const res = await fetch(`${base}/v1/views/${viewId}/rpc${query}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(origin ? { origin } : {}),
      ...(grant ? { 'x-apphost-view-grant': grant } : {}),
      ...headers,
    },
    body: raw,
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> & { error: Record<string, unknown> },
  };
}

const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
const parseError = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32700, message: expect.any(String), data: { code: 'INVALID_ARGUMENT', reason: 'RPC_INVALID_REQUEST', retryable: false } },
};

beforeAll(async () => {
  viewer = await sign('alice', 'view');
});

describe('POST /v1/views/{viewId}/rpc: what the gateway refuses itself', () => {
  it('no token 401, a token without the view scope 403, a missing or foreign Origin 403: HTTP envelopes, nothing sent', async () => {
    expect(await rpc({ body: ping, bearer: null })).toMatchObject({ status: 401, body: { error: { code: 'UNAUTHENTICATED' } } });
    expect(await rpc({ body: ping, bearer: await sign('alice', 'runtime') })).toMatchObject({ status: 403, body: { error: { code: 'PERMISSION_DENIED' } } });
    expect(await rpc({ body: ping, origin: 'https://evil.example' })).toMatchObject({ status: 403, body: { error: { code: 'PERMISSION_DENIED' } } });
    expect((await rpc({ body: ping, origin: null })).status).toBe(403);
    expect(seen).toEqual([]);
  });

  it('a missing or malformed grant is 403 VIEW_GRANT_INVALID, never echoed, nothing sent', async () => {
    for (const grant of [null, 'short', `${GRANT.slice(0, 42)}!`]) {
      const refused = await rpc({ body: ping, grant });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'VIEW_GRANT_INVALID' } });
      expect(refused.text).not.toContain('short');
    }
    expect(seen).toEqual([]);
  });

  it('a body that is not one UTF-8 JSON value is 200 with the JSON-RPC parse error, nothing sent', async () => {
    const refusals = [
      await rpc({ body: '{"jsonrpc":"2.0","id":1,' }),
      await rpc({ body: 'not json at all' }),
      await rpc({ body: '' }),
      await rpc({ body: JSON.stringify(ping), headers: { 'content-type': 'text/plain' } }),
      await rpc({ body: JSON.stringify(ping), headers: { 'content-type': 'application/json; charset=iso-8859-1' } }),
      await rpc({ body: new Uint8Array([0x22, 0xff, 0xfe, 0x22]) }), // a JSON string of invalid UTF-8
      await rpc({ body: JSON.stringify(ping), headers: { 'content-encoding': 'x-unknown' } }),
    ];
    for (const res of refusals) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body).toEqual(parseError);
    }
    expect(seen).toEqual([]);
  });

  it('a malformed X-AppHost-User-Attested is 400, nothing sent', async () => {
    const res = await rpc({ body: ping, headers: { 'x-apphost-user-attested': 'message, everything' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((await rpc({ body: ping, viewId: 'not-a-view' })).status).toBe(400);
    expect(seen).toEqual([]);
  });
});

describe('POST /v1/views/{viewId}/rpc: what it forwards and how it answers', () => {
  it('a request: 200 with the JSON-RPC response (no-store), forwarding the caller, View, grant, message, size and no attestation', async () => {
    const res = await rpc({ body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'poll', arguments: {} } } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 7, result: { echoed: 'tools/call' } });
    expect(seen.map((s) => s.request)).toEqual([
      {
        caller: { principal: { tenant: 'acme', subject: 'alice', scopes: ['view'] }, userId: 'alice' },
        viewId: VIEW,
        grant: GRANT,
        message: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'poll', arguments: {} } },
        bytes: expect.any(Number),
        attested: [],
      },
    ]);
  });

  it('`bytes` is the raw body size (whitespace and multi-byte characters included; after content decoding)', async () => {
    const text = ' {\n  "jsonrpc": "2.0", "id": 2,\t"method": "ping", "params": { "note": "é€😀" } }\n ';
    expect((await rpc({ body: text })).status).toBe(200);
    const gzipped = JSON.stringify({ ...ping, id: 3, params: { pad: 'x'.repeat(10_000) } });
    expect((await rpc({ body: gzipSync(gzipped), headers: { 'content-encoding': 'gzip' } })).body).toMatchObject({ id: 3 });
    expect(seen.map((s) => s.request.bytes)).toEqual([Buffer.byteLength(text), Buffer.byteLength(gzipped)]);
    expect(seen[0].request.message).toEqual({ jsonrpc: '2.0', id: 2, method: 'ping', params: { note: 'é€😀' } });
  });

  it('admits bodies past the 100 KiB JSON limit of the other routes; past the bus limit or the route limit answers -32006', async () => {
    const big = { ...ping, id: 4, params: { pad: 'x'.repeat(300 * 1024) } };
    expect(await rpc({ body: big })).toMatchObject({ status: 200, body: { id: 4, result: { echoed: 'ping' } } });
    expect(seen.map((s) => s.request.bytes)).toEqual([Buffer.byteLength(JSON.stringify(big))]);
    // The other routes keep their limit: the same size on POST /v1/views is 413.
    const open = await fetch(`${base}/v1/views`, {
      method: 'POST',
      headers: { authorization: `Bearer ${viewer}`, origin: ORIGIN, 'content-type': 'application/json' },
      body: JSON.stringify({ pad: 'x'.repeat(300 * 1024) }),
    });
    expect(open.status).toBe(413);

    const tooLarge = (id: number | null) => ({
      jsonrpc: '2.0',
      id,
      error: { code: -32006, message: expect.any(String), data: { code: 'PAYLOAD_TOO_LARGE', reason: 'RPC_REQUEST_TOO_LARGE', retryable: false } },
    });
    const overBus = await rpc({ body: { ...ping, id: 5, params: { pad: 'x'.repeat(2 * 1024 * 1024) } } });
    expect(overBus).toMatchObject({ status: 200, body: tooLarge(5) });
    const overRoute = await rpc({ body: { ...ping, id: 6, params: { pad: 'x'.repeat(VIEW_RPC_MAX_BODY_BYTES) } } });
    expect(overRoute).toMatchObject({ status: 200, body: tooLarge(null) });
    expect(seen).toHaveLength(1);
  }, 30_000);

  it('a batch array is forwarded as parsed (governed-operations answers -32600)', async () => {
    const batch = [ping, { ...ping, id: 2 }];
    const res = await rpc({ body: batch });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'INVALID_ARGUMENT', reason: 'RPC_INVALID_REQUEST' } } });
    expect(seen.map((s) => s.request.message)).toEqual([batch]);
  });

  it('a notification answers 202 and a cancelled request 204, both with no body', async () => {
    const note = await rpc({ body: { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hi' } } });
    expect([note.status, note.text, note.headers.get('cache-control')]).toEqual([202, '', 'no-store']);
    const cancelled = await rpc({ body: { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'slow', arguments: {} } } });
    expect([cancelled.status, cancelled.text]).toEqual([204, '']);
  });

  it('passes bus errors through the error filter: an unknown or foreign View 404, a wrong grant 403', async () => {
    expect(await rpc({ body: ping, viewId: FOREIGN_VIEW })).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    const wrong = await rpc({ body: ping, grant: 'W'.repeat(43) });
    expect(wrong).toMatchObject({ status: 403, body: { error: { code: 'PERMISSION_DENIED', details: { reason: 'VIEW_GRANT_INVALID' } } } });
  });

  it('acts for the user a delegate names (?userId=), and for no other user without delegate', async () => {
    const delegate = await sign('svc-runtime', 'view delegate');
    expect((await rpc({ body: ping, bearer: delegate, query: '?userId=bob' })).status).toBe(200);
    expect(seen.map((s) => s.request.caller)).toEqual([{ principal: { tenant: 'acme', subject: 'svc-runtime', scopes: ['view', 'delegate'] }, userId: 'bob' }]);
    expect((await rpc({ body: ping, query: '?userId=bob' })).status).toBe(404);
    expect((await rpc({ body: ping, query: '?other=1' })).status).toBe(400);
    expect(seen).toHaveLength(1);
  });

  it('forwards the attestation, deduplicated', async () => {
    await rpc({ body: ping, headers: { 'x-apphost-user-attested': 'message, message' } });
    expect(seen.map((s) => s.request.attested)).toEqual([['message']]);
  });

  it('runs under GATEWAY_VIEW_RPC_TIMEOUT_MS, not HTTP_REQUEST_TIMEOUT_MS; a caller may only shorten it', async () => {
    await rpc({ body: ping });
    await rpc({ body: ping, headers: { 'x-apphost-timeout-ms': '1500' } });
    await rpc({ body: ping, headers: { 'x-apphost-timeout-ms': '600000' } });
    const [route, shortened, capped] = seen.map((s) => s.remainingMs);
    expect(route).toBeGreaterThan(HTTP_TIMEOUT_MS);
    expect(route).toBeLessThanOrEqual(RPC_TIMEOUT_MS);
    expect(shortened).toBeLessThanOrEqual(1500);
    expect(capped).toBeGreaterThan(HTTP_TIMEOUT_MS);
    expect(capped).toBeLessThanOrEqual(RPC_TIMEOUT_MS);
  });

  it('is in the OpenAPI document with every answer', async () => {
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: object }>> };
    expect(Object.keys(doc.paths['/v1/views/{viewId}/rpc'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/v1/views/{viewId}/rpc'].post.responses)).toEqual(expect.arrayContaining(['200', '202', '204', '401', '403', '404']));
  });

  it('never writes the grant to its log', () => {
    expect(logText).toContain('http request handled');
    expect(logText).not.toContain(GRANT);
  });
});
