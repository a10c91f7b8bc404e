import { Writable } from 'node:stream';
import { BusServer, NatsTransport } from '@apphost/bus';
import {
  AppHostError,
  GovernedCloseView,
  GovernedGetView,
  GovernedOpenView,
  GovernedRenewView,
  GovernedReplayView,
  type LiveView,
  type OpenViewResponse,
  type RequestOf,
  type ViewSnapshot,
} from '@apphost/contracts';
import { startService, type RunningService } from '@apphost/runtime';
import { connectTestTransport, startPrivateNats, TEST_BUS_PREFIX, type PrivateNats } from '@apphost/testing';
import { SignJWT } from 'jose';
import pino from 'pino';
import { gatewayService } from '../service';

/**
 * The View routes over HTTP against a stand-in governed-operations on this suite's own NATS: what the gateway
 * resolves (caller, session key, invocation id, grant) and sends, how it answers (status per mode, 204 on close,
 * Origin and scope checks), and that the grant never reaches its log.
 */
const JWT = { issuer: 'https://issuer.views-http', audience: 'apphost-views-http', secret: 'a-views-http-secret-that-is-at-least-32-bytes' };
const ORIGIN = 'https://host.views-http.example';
const GRANT = 'G'.repeat(21) + '_views-http-grant-0123'; // 43 base64url characters
const VIEW = `vw-${'a'.repeat(32)}`;
const FOREIGN_VIEW = `vw-${'f'.repeat(32)}`;
/**
 * Over one bus message, with multi-byte characters across the chunk boundaries, a byte-order mark (content, kept),
 * and every kind of character the answer's JSON must escape (quotes, backslashes, line breaks, a C0 control).
 */
const LARGE_HTML = `\ufeff<!doctype html>\n<p class="x">\t${'é€😀 \\ "q" \u2028'.repeat(60_000)}\u0001</p>\r\n`;
/** As a server may write it (not as JSON.stringify would: the gateway sends it on as it is). */
const LARGE_LITERAL = Buffer.from(`"${JSON.stringify(LARGE_HTML).slice(1, -1).replaceAll('é', '\\u00e9')}"`, 'utf8');
const widget = { widgetId: '7:call-1', eventId: 7, functionCallId: 'call-1', resourceUri: 'ui://w/app.html', tool: 'show', toolsetId: 'ts' };

const sign = (sub: string, scope: string, tenant = 'acme') =>
  new SignJWT({ tenant, scope })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(JWT.issuer)
    .setAudience(JWT.audience)
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(JWT.secret));

const live = (viewId: string): OpenViewResponse => ({
  mode: 'live',
  viewId,
  viewGeneration: 1,
  expiresAt: new Date(Date.now() + 60_000).toISOString(),
  grant: GRANT,
  document: { resourceUri: widget.resourceUri, html: '<!doctype html><p>hi</p>', meta: {} },
  widget,
  toolInput: { arguments: {} },
  toolResult: { content: [] },
  hostCapabilities: {},
  hostContext: {},
  csp: { header: "default-src 'none'", rejected: [] },
  allow: '',
});
const placeholder = (viewId: string): OpenViewResponse => ({
  mode: 'placeholder',
  viewId,
  reason: 'LEGACY_WIDGET',
  widget: { ...widget, toolsetId: null },
  actions: [{ kind: 'rerun', tool: 'show', label: 'Run tool again', warning: 'effects may repeat' }],
});
const snapshot = (viewId: string, caller: RequestOf<typeof GovernedGetView>['caller']): ViewSnapshot => ({
  viewId,
  mode: 'live',
  state: 'ACTIVE',
  reason: null,
  session: { tenant: caller.principal.tenant, appName: 'app', userId: caller.userId, sessionId: 's1' },
  incarnation: 1,
  widget,
  viewGeneration: 1,
  generation: null,
  createdAt: new Date().toISOString(),
  expiresAt: null,
  teardownRequestedAt: null,
});

let nats: PrivateNats;
let gateway: RunningService;
let gatewayTransport: NatsTransport;
let governedTransport: NatsTransport;
let governed: BusServer;
let base: string;
let logText = '';
const seen: { op: string; payload: Record<string, unknown> }[] = [];
let closedAlready = false;

beforeAll(async () => {
  nats = await startPrivateNats();
  governedTransport = await connectTestTransport('fake-governed', { natsUrl: nats.url });
  governed = new BusServer({
    transport: governedTransport,
    instanceId: 'fake-governed',
    queueGroup: 'governed-operations',
    logger: { error: () => undefined, warn: () => undefined },
  });
  const notFound = () => new AppHostError('NOT_FOUND', 'view not found');
  governed.register(GovernedOpenView, (r, context) => {
    seen.push({ op: 'open', payload: r });
    if (r.functionCallId === 'legacy') return placeholder(VIEW);
    if (!['by-reference', 'reference-gone', 'not-utf8', 'not-literal'].includes(r.functionCallId)) return live(VIEW);
    // A large document stays with its holder (here the stand-in itself): the gateway fetches it.
    const bytes = { 'not-utf8': Buffer.from([0x22, 0x3c, 0xff, 0xfe, 0x3e, 0x22]), 'not-literal': Buffer.from('<p>unquoted</p>') }[r.functionCallId];
    const held = context.hold('document', bytes ?? LARGE_LITERAL);
    const htmlLiteralReference = r.functionCallId === 'by-reference' ? held : { ...held, transferId: '3b241101-e2bb-4255-8caf-4136c566a962' };
    const { document, ...view } = live(VIEW) as LiveView;
    return { ...view, document: { resourceUri: document.resourceUri, meta: document.meta, htmlLiteralReference } };
  });
  governed.register(GovernedGetView, (r) => {
    seen.push({ op: 'get', payload: r });
    if (r.viewId === FOREIGN_VIEW) throw notFound();
    return snapshot(r.viewId, r.caller);
  });
  governed.register(GovernedCloseView, (r) => {
    seen.push({ op: 'close', payload: r });
    if (r.viewId === FOREIGN_VIEW) throw notFound();
    const closed = !closedAlready;
    closedAlready = true;
    return { closed };
  });
  governed.register(GovernedRenewView, (r) => {
    seen.push({ op: 'renew', payload: r });
    return { viewId: r.viewId, expiresAt: new Date(Date.now() + 60_000).toISOString() };
  });
  governed.register(GovernedReplayView, (r, context) => {
    seen.push({ op: 'replay', payload: r });
    const event = { eventId: 8, incarnation: 1, rejection: null, functionResponses: [], widgets: [], confirmations: [] };
    if (r.invocationId !== 'inv-by-reference') return { event, view: null };
    const { document, ...view } = live(VIEW) as LiveView;
    const htmlLiteralReference = context.hold('document', LARGE_LITERAL);
    return { event, view: { ...view, document: { resourceUri: document.resourceUri, meta: document.meta, htmlLiteralReference } } };
  });
  governed.start();
  await governed.ready();

  gatewayTransport = await connectTestTransport('gateway', { natsUrl: nats.url });
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
    },
    transport: gatewayTransport,
    http: true,
    processMetrics: false,
    // Every level: the grant must not reach the log even at debug (request lines, error lines).
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

interface Call {
  method?: string;
  body?: unknown;
  bearer?: string;
  origin?: string | null;
  headers?: Record<string, string>;
}
async function call(route: string, { method = 'GET', body, bearer, origin = ORIGIN, headers = {} }: Call = {}) {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(origin ? { origin } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
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

const openBody = { appName: 'app', sessionId: 's1', eventId: 7, functionCallId: 'call-1' };

describe('gateway View routes', () => {
  let viewer: string;

  beforeAll(async () => {
    viewer = await sign('alice', 'view');
  });

  it('POST /v1/views answers a live bootstrap 201 (no-store), sending the caller and the session in the token’s tenant and user', async () => {
    const res = await call('/v1/views', { method: 'POST', bearer: viewer, body: { ...openBody, hostContext: { theme: 'dark', locale: 'en-GB' } } });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('etag')).toBeNull(); // never hashed for an ETag: it holds a grant and the whole document
    expect(res.body).toMatchObject({ mode: 'live', viewId: VIEW, grant: GRANT });
    expect(seen).toEqual([
      {
        op: 'open',
        payload: {
          caller: { principal: { tenant: 'acme', subject: 'alice', scopes: ['view'] }, userId: 'alice' },
          session: { tenant: 'acme', appName: 'app', userId: 'alice', sessionId: 's1' },
          eventId: 7,
          functionCallId: 'call-1',
          hostContext: { theme: 'dark', locale: 'en-GB' },
        },
      },
    ]);
  });

  it('POST /v1/views fetches a document answered by reference from its holder, and answers it inline, byte for byte', async () => {
    const res = await call('/v1/views', { method: 'POST', bearer: viewer, body: { ...openBody, functionCallId: 'by-reference' } });
    expect(res.status).toBe(201);
    expect(res.body['document']).toEqual({ resourceUri: widget.resourceUri, html: LARGE_HTML, meta: {} });
    // The rest of the answer as governed-operations gave it; a JSON body of exactly its length, never cached.
    const { document: _inline, ...rest } = live(VIEW) as LiveView;
    expect(res.body).toEqual({ ...rest, expiresAt: expect.any(String), document: expect.anything() });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.text, 'utf8'));
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('etag')).toBeNull();
    expect(governed.parkedTransferBytes).toBe(0);
    expect(seen.map((s) => s.op)).toEqual(['open']);
  });

  it(':refresh answers a replayed View whose document came by reference with that document inline, byte for byte', async () => {
    const res = await call(`/v1/views/${VIEW}:refresh`, { method: 'POST', bearer: viewer, body: { invocationId: 'inv-by-reference' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toMatchObject({
      event: { eventId: 8 },
      view: { viewId: VIEW, document: { resourceUri: widget.resourceUri, html: LARGE_HTML, meta: {} } },
    });
    expect(governed.parkedTransferBytes).toBe(0);
  });

  it('POST /v1/views closes the View when its document cannot be fetched, and answers DATA_LOSS: no grant outlives the failure', async () => {
    const res = await call('/v1/views', { method: 'POST', bearer: viewer, body: { ...openBody, functionCallId: 'reference-gone' } });
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'DATA_LOSS' });
    expect(res.text).not.toContain(GRANT);
    expect(seen.map((s) => s.op)).toEqual(['open', 'close']);
    expect(seen[1].payload).toEqual({ caller: { principal: { tenant: 'acme', subject: 'alice', scopes: ['view'] }, userId: 'alice' }, viewId: VIEW });
  });

  it.each(['not-utf8', 'not-literal'])(
    'POST /v1/views refuses held bytes that are not a JSON string of UTF-8 (%s) as DATA_LOSS, closing the View',
    async (functionCallId) => {
      const res = await call('/v1/views', { method: 'POST', bearer: viewer, body: { ...openBody, functionCallId } });
      expect(res.status).toBe(500);
      expect(res.body.error).toMatchObject({ code: 'DATA_LOSS' });
      expect(seen.map((s) => s.op)).toEqual(['open', 'close']);
    },
  );

  it('POST /v1/views answers a placeholder 200', async () => {
    const res = await call('/v1/views', { method: 'POST', bearer: viewer, body: { ...openBody, functionCallId: 'legacy' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ mode: 'placeholder', reason: 'LEGACY_WIDGET', actions: [{ kind: 'rerun' }] });
    expect(res.body).not.toHaveProperty('grant');
  });

  it('refuses an invalid body, a missing or foreign Origin on a write, and a token without the view scope, sending nothing', async () => {
    const bad = await call('/v1/views', { method: 'POST', bearer: viewer, body: { ...openBody, eventId: 'seven', extra: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    const badContext = await call('/v1/views', { method: 'POST', bearer: viewer, body: { ...openBody, hostContext: { theme: 'sepia' } } });
    expect(badContext.status).toBe(400);
    expect((await call('/v1/views', { method: 'POST', bearer: viewer, body: openBody, origin: null })).status).toBe(403);
    expect((await call('/v1/views', { method: 'POST', bearer: viewer, body: openBody, origin: 'https://evil.example' })).status).toBe(403);
    expect((await call(`/v1/views/${VIEW}`, { bearer: viewer, origin: 'https://evil.example' })).status).toBe(403);
    const runtimeOnly = await call('/v1/views', { method: 'POST', bearer: await sign('alice', 'runtime'), body: openBody });
    expect(runtimeOnly.status).toBe(403);
    expect((await call('/v1/views', { method: 'POST', body: openBody })).status).toBe(401);
    expect(seen).toEqual([]);
  });

  it('another user is 404 unless the principal may delegate, which then acts for that user', async () => {
    const foreign = await call('/v1/views', { method: 'POST', bearer: viewer, body: { ...openBody, userId: 'bob' } });
    expect(foreign.status).toBe(404);
    expect((await call(`/v1/views/${VIEW}?userId=bob`, { bearer: viewer })).status).toBe(404);
    expect(seen).toEqual([]);

    const delegate = await sign('svc-runtime', 'view delegate');
    expect((await call('/v1/views', { method: 'POST', bearer: delegate, body: { ...openBody, userId: 'bob' } })).status).toBe(201);
    expect(seen[0].payload).toMatchObject({ caller: { userId: 'bob' }, session: { tenant: 'acme', userId: 'bob', sessionId: 's1' } });
    const got = await call(`/v1/views/${VIEW}?userId=bob`, { bearer: delegate });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ session: { userId: 'bob' } });
  });

  it('GET /v1/views/{viewId} needs no Origin (a read) and passes NOT_FOUND through', async () => {
    const res = await call(`/v1/views/${VIEW}`, { bearer: viewer, origin: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ viewId: VIEW, state: 'ACTIVE' });
    expect((await call(`/v1/views/${FOREIGN_VIEW}`, { bearer: viewer })).status).toBe(404);
    expect((await call('/v1/views/not-a-view', { bearer: viewer })).status).toBe(400);
  });

  it('DELETE /v1/views/{viewId} is 204 every time, and 404 for a View the caller may not see', async () => {
    const first = await call(`/v1/views/${VIEW}`, { method: 'DELETE', bearer: viewer });
    const second = await call(`/v1/views/${VIEW}`, { method: 'DELETE', bearer: viewer });
    expect([first.status, first.text, second.status, second.text]).toEqual([204, '', 204, '']);
    expect((await call(`/v1/views/${FOREIGN_VIEW}`, { method: 'DELETE', bearer: viewer })).status).toBe(404);
    expect(seen.map((s) => s.op)).toEqual(['close', 'close', 'close']);
  });

  it(':renew sends the grant from X-AppHost-View-Grant; a missing or malformed one is 403 VIEW_GRANT_INVALID with nothing sent', async () => {
    const renewed = await call(`/v1/views/${VIEW}:renew`, { method: 'POST', bearer: viewer, headers: { 'x-apphost-view-grant': GRANT } });
    expect(renewed.status).toBe(200);
    expect(renewed.body).toEqual({ viewId: VIEW, expiresAt: expect.any(String) });
    expect(seen).toEqual([{ op: 'renew', payload: { caller: expect.objectContaining({ userId: 'alice' }), viewId: VIEW, grant: GRANT } }]);

    seen.length = 0;
    const malformed: Record<string, string>[] = [{}, { 'x-apphost-view-grant': 'short' }, { 'x-apphost-view-grant': `${GRANT.slice(0, 42)}!` }];
    for (const headers of malformed) {
      const refused = await call(`/v1/views/${VIEW}:renew`, { method: 'POST', bearer: viewer, headers });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'VIEW_GRANT_INVALID' } });
      expect(refused.text).not.toContain('short');
    }
    expect(seen).toEqual([]);
  });

  it(':refresh and :rerun forward the action with a caller invocation id, or one keyed by the View and action', async () => {
    const refresh = await call(`/v1/views/${VIEW}:refresh`, {
      method: 'POST',
      bearer: viewer,
      body: { invocationId: 'inv-r1', hostContext: { theme: 'light' } },
    });
    expect(refresh.status).toBe(200);
    expect(refresh.headers.get('cache-control')).toBe('no-store');
    expect(refresh.body).toMatchObject({ event: { eventId: 8 }, view: null });
    const rerun = await call(`/v1/views/${VIEW}:rerun`, { method: 'POST', bearer: viewer });
    expect(rerun.status).toBe(200);
    expect(seen.map((s) => s.payload)).toEqual([
      expect.objectContaining({ viewId: VIEW, action: 'refresh', invocationId: 'inv-r1', hostContext: { theme: 'light' } }),
      expect.objectContaining({ viewId: VIEW, action: 'rerun', invocationId: `${VIEW}:rerun` }),
    ]);
    expect((await call(`/v1/views/${VIEW}:explode`, { method: 'POST', bearer: viewer })).status).toBe(400);
    expect((await call(`/v1/views/${VIEW}:rerun`, { method: 'POST', bearer: viewer, origin: null })).status).toBe(403);
  });

  it('documents every View route and method in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths['/v1/views'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/v1/views/{viewId}']).sort()).toEqual(['delete', 'get', 'post']);
  });

  it('never writes the grant to its log', () => {
    expect(logText).toContain('http request handled');
    expect(logText).not.toContain(GRANT);
  });
});
