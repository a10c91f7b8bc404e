import { SealedResolve, type RunToolBatchResponse } from '@apphost/contracts';
import {
  CAPABILITY_GATED_RESOURCE,
  captureServiceLogs,
  descriptors,
  dropSchemasWithPrefix,
  fixtureServerCommand,
  PUBLISHED_SERVERS,
  publishedServerCommand,
  startFakeProviders,
  startPrivateNats,
  STATEFUL_NONCE_RESOURCE,
  uniquePrefix,
  type PrivateNats,
} from '@apphost/testing';
import { fixtureSpec, publishedSpec, token } from './catalog-harness';
import { bootViewPlane, directRead, putProfile, putToolset, sessionWithUiCall, viewHttp, viewProfile, type ViewPlane } from './views-harness';

/**
 * Views end to end: the real gateway, lifecycle-store, sealed-result-store, binding-registry, catalog-policy and
 * governed-operations on a private NATS, real PostgreSQL and Redis, published MCP App servers and fixtures over
 * stdio. The View's document is compared with what a plain SDK client reads of the same server.
 * Budget: ~40 s to boot and bind, ~40 s of tests (2 busy cores).
 */
jest.setTimeout(150_000);

const VANILLA = PUBLISHED_SERVERS.basicVanillaJs;
const SYSMON = PUBLISHED_SERVERS.systemMonitor;
const UNKNOWN_GRANT = 'x'.repeat(43);

describe('Views in the plane', () => {
  const prefix = uniquePrefix();
  const logs = captureServiceLogs('debug');
  /** Every grant the file was given: none may appear in a document, context, result or log line. */
  const grants: string[] = [];
  const rendered: string[] = [];
  let nats: PrivateNats;
  let providers: { stop(): Promise<void> };
  let plane: ViewPlane;
  let http: ReturnType<typeof viewHttp>;
  let alice: string;

  const open = async (appName: string, sessionId: string, ev: RunToolBatchResponse, functionCallId = 'call-1', hostContext?: Record<string, unknown>) => {
    const res = await http('POST', '/v1/views', {
      bearer: alice,
      body: { appName, sessionId, eventId: ev.eventId, functionCallId, ...(hostContext ? { hostContext } : {}) },
    });
    if (res.body.grant) grants.push(res.body.grant as string);
    if (res.body.mode === 'live') rendered.push(res.body.document.html, JSON.stringify(res.body.hostContext), JSON.stringify(res.body.toolResult));
    return res;
  };

  beforeAll(async () => {
    nats = await startPrivateNats();
    providers = await startFakeProviders(nats.url, ['export-audit']);
    plane = await bootViewPlane(nats.url, prefix, {
      vanilla: ['vanilla'],
      monitor: ['sysmon'],
      nonce: ['nonce'],
      gated: ['gated'],
      'gated-model': ['gated-model'],
      legacy: ['vanilla-legacy'],
    });
    http = viewHttp(plane);
    alice = await token('alice', 'runtime admin view');
    await putProfile(plane, 'p1', viewProfile());
    const bound = await Promise.all([
      putToolset(plane, 'vanilla', publishedSpec('basicVanillaJs', 'p1')),
      putToolset(plane, 'sysmon', publishedSpec('systemMonitor', 'p1')),
      putToolset(plane, 'nonce', fixtureSpec('stateful-nonce', 'p1')),
      putToolset(plane, 'gated', fixtureSpec('capability-gated', 'p1')),
    ]);
    expect(bound).toEqual(['PROFILE_BOUND', 'PROFILE_BOUND', 'PROFILE_BOUND', 'PROFILE_BOUND']);
    expect(await putToolset(plane, 'gated-model', fixtureSpec('capability-gated', null))).toBe('MODEL_ONLY');
    expect(await putToolset(plane, 'vanilla-legacy', publishedSpec('basicVanillaJs', null))).toBe('MODEL_ONLY');
  }, 120_000);

  afterAll(async () => {
    logs.stop();
    await plane?.stop();
    await providers?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  it('walkthrough: the live View of get-time is the exact document a direct read gets, with its tool input, full result and CSP; renew, close', async () => {
    const ev = await sessionWithUiCall(http, alice, { appName: 'vanilla', sessionId: 'v-walk', tool: VANILLA.uiTool });
    const [descriptor] = descriptors(ev);
    expect(descriptor.resourceUri).toBe(VANILLA.resourceUri);

    const opened = await open('vanilla', 'v-walk', ev, 'call-1', { theme: 'dark', locale: 'en-GB' });
    expect(opened.status).toBe(201);
    expect(opened.headers.get('cache-control')).toBe('no-store');
    const view = opened.body;
    expect(view).toMatchObject({
      mode: 'live',
      viewId: expect.stringMatching(/^vw-[0-9a-f]{32}$/),
      viewGeneration: 1,
      grant: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      widget: { eventId: ev.eventId, functionCallId: 'call-1', resourceUri: VANILLA.resourceUri, tool: VANILLA.uiTool, toolsetId: 'vanilla' },
      toolInput: { arguments: {} },
      hostContext: { theme: 'dark', locale: 'en-GB', toolInfo: { id: 'call-1', tool: expect.objectContaining({ name: VANILLA.uiTool }) } },
    });

    // The exact bytes of the one content item a plain SDK client reads from the same server, and its `_meta.ui`.
    const direct = await directRead(publishedServerCommand('basicVanillaJs'), VANILLA.resourceUri);
    expect(direct.contents).toHaveLength(1);
    const item = direct.contents[0] as { text: string; _meta?: { ui?: Record<string, unknown> } };
    expect(view.document.html).toBe(item.text);
    expect(Buffer.byteLength(view.document.html as string)).toBeGreaterThan(200_000);
    const declared = direct.tools.find((t) => t.name === VANILLA.uiTool) as { _meta?: { ui?: Record<string, unknown> } };
    expect(view.document.meta).toEqual({ ...declared._meta?.ui, ...item._meta?.ui });

    // The full sealed result, not the model's projection.
    const sealed = await plane.sealed.client.request(SealedResolve, {
      key: {
        session: { tenant: 'acme', appName: 'vanilla', userId: 'alice', sessionId: 'v-walk' },
        incarnation: ev.incarnation,
        eventId: String(ev.eventId),
        functionCallId: 'call-1',
        recordId: String(descriptor.sealedResultRef?.recordId),
      },
    });
    expect(view.toolResult).toEqual((sealed as { envelope: { result: unknown } }).envelope.result);
    expect(view.csp.header).toMatch(/^default-src 'none'/);
    expect(view.csp.header).not.toMatch(/unsafe-eval|\*/);
    // The harness profile declares the View RPC only: exactly that is offered.
    expect(view.hostCapabilities).toEqual({ serverTools: {}, serverResources: {} });

    const got = await http('GET', `/v1/views/${view.viewId}`, { bearer: alice });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      viewId: view.viewId,
      mode: 'live',
      state: 'ACTIVE',
      reason: null,
      incarnation: ev.incarnation,
      generation: { generationId: expect.any(String), fence: expect.any(Number) },
      expiresAt: view.expiresAt,
    });
    expect(got.text).not.toContain(view.grant);

    const renewed = await http('POST', `/v1/views/${view.viewId}:renew`, { bearer: alice, headers: { 'x-apphost-view-grant': view.grant } });
    expect(renewed.status).toBe(200);
    expect(Date.parse(renewed.body.expiresAt)).toBeGreaterThanOrEqual(Date.parse(view.expiresAt));
    const wrong = await http('POST', `/v1/views/${view.viewId}:renew`, { bearer: alice, headers: { 'x-apphost-view-grant': UNKNOWN_GRANT } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'VIEW_GRANT_INVALID' } });

    expect((await http('DELETE', `/v1/views/${view.viewId}`, { bearer: alice })).status).toBe(204);
    expect((await http('DELETE', `/v1/views/${view.viewId}`, { bearer: alice })).status).toBe(204);
    const closed = await http('GET', `/v1/views/${view.viewId}`, { bearer: alice });
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ state: 'CLOSED' });
    const late = await http('POST', `/v1/views/${view.viewId}:renew`, { bearer: alice, headers: { 'x-apphost-view-grant': view.grant } });
    expect(late.status).toBe(400);
    expect(late.body.error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'VIEW_REVOKED', revocation: 'TORN_DOWN' } });
  });

  it('tool input is the batch arguments and the tool result the full sealed one (structuredContent the model never saw)', async () => {
    const ev = await sessionWithUiCall(http, alice, { appName: 'nonce', sessionId: 'v-nonce', tool: 'start-session', arguments: { label: 'seen' } });
    const projection = ev.functionResponses[0].response;
    expect(projection).not.toHaveProperty('structuredContent');
    const opened = await open('nonce', 'v-nonce', ev);
    expect(opened.status).toBe(201);
    expect(opened.body.toolInput).toEqual({ arguments: { label: 'seen' } });
    expect(opened.body.toolResult.content).toEqual(projection.content);
    expect(opened.body.toolResult.structuredContent).toMatchObject({ nonce: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(opened.body.document.resourceUri).toBe(STATEFUL_NONCE_RESOURCE);
  });

  it('system-monitor: the app-only poll-system-stats stays out of the model catalog, and the View boots byte-identical', async () => {
    expect((await http('POST', '/v1/sessions', { bearer: alice, body: { appName: 'monitor', sessionId: 'v-mon' } })).status).toBe(201);
    const catalog = await http('GET', '/v1/sessions/v-mon/catalog?appName=monitor', { bearer: alice });
    const names = (catalog.body.tools as Array<{ name: string }>).map((t) => t.name);
    expect(names).toContain(SYSMON.uiTool);
    expect(names).not.toContain(SYSMON.appOnlyTool);

    const batch = await http('POST', '/v1/sessions/v-mon/tool-batches', {
      bearer: alice,
      body: { appName: 'monitor', invocationId: 'inv-mon', calls: [{ functionCallId: 'call-1', tool: SYSMON.uiTool, arguments: {} }] },
    });
    expect(batch.status).toBe(200);
    const opened = await open('monitor', 'v-mon', batch.body as RunToolBatchResponse);
    expect(opened.status).toBe(201);
    const direct = await directRead(publishedServerCommand('systemMonitor'), SYSMON.resourceUri);
    expect(opened.body.document.html).toBe((direct.contents[0] as { text: string }).text);
    expect(opened.body.widget).toMatchObject({ tool: SYSMON.uiTool, toolsetId: 'sysmon' });
  });

  it('capability-gated: bound, its _meta.ui reaches the app-safe client and the View boots; model-only, no widget at all (404)', async () => {
    const ev = await sessionWithUiCall(http, alice, { appName: 'gated', sessionId: 'v-gated', tool: 'show-widget' });
    expect(descriptors(ev)).toEqual([expect.objectContaining({ resourceUri: CAPABILITY_GATED_RESOURCE })]);
    const opened = await open('gated', 'v-gated', ev);
    expect(opened.status).toBe(201);
    const direct = await directRead(fixtureServerCommand('capability-gated'), CAPABILITY_GATED_RESOURCE);
    expect(opened.body.document.html).toBe((direct.contents[0] as { text: string }).text);
    // The server saw the extension advertised on the generation that ran the call.
    expect(opened.body.toolResult.structuredContent).toEqual({ ui: true });

    const plain = await sessionWithUiCall(http, alice, { appName: 'gated-model', sessionId: 'v-gated-model', tool: 'show-widget' });
    expect(plain.widgets).toEqual([]);
    const none = await open('gated-model', 'v-gated-model', plain);
    expect(none.status).toBe(404);
  });

  it('a legacy widget (MODEL_ONLY toolset) opens the read-only placeholder LEGACY_WIDGET; rerun runs it again once per View, refresh is not replay-safe', async () => {
    const ev = await sessionWithUiCall(http, alice, { appName: 'legacy', sessionId: 'v-legacy', tool: VANILLA.uiTool });
    expect(ev.widgets).toEqual([expect.objectContaining({ resourceUri: VANILLA.resourceUri, tool: VANILLA.uiTool })]);
    const opened = await open('legacy', 'v-legacy', ev);
    expect(opened.status).toBe(200);
    expect(opened.body).toEqual({
      mode: 'placeholder',
      viewId: expect.stringMatching(/^vw-[0-9a-f]{32}$/),
      reason: 'LEGACY_WIDGET',
      widget: expect.objectContaining({ functionCallId: 'call-1', toolsetId: null }),
      actions: [{ kind: 'rerun', tool: VANILLA.uiTool, label: expect.any(String), warning: expect.any(String) }],
    });
    const viewId = opened.body.viewId as string;
    expect((await http('GET', `/v1/views/${viewId}`, { bearer: alice })).body).toMatchObject({
      mode: 'placeholder',
      state: 'ACTIVE',
      reason: 'LEGACY_WIDGET',
      generation: null,
    });

    const refresh = await http('POST', `/v1/views/${viewId}:refresh`, { bearer: alice, body: {} });
    expect(refresh.status).toBe(400);
    expect(refresh.body.error).toMatchObject({ details: { reason: 'REPLAY_NOT_SAFE' } });

    const rerun = await http('POST', `/v1/views/${viewId}:rerun`, { bearer: alice, body: {} });
    expect(rerun.status).toBe(200);
    expect(rerun.body.event.eventId).toBeGreaterThan(ev.eventId);
    expect(rerun.body.view).toMatchObject({ mode: 'placeholder', reason: 'LEGACY_WIDGET' });
    // The same click again is the same invocation: the same event, nothing runs twice.
    const again = await http('POST', `/v1/views/${viewId}:rerun`, { bearer: alice, body: {} });
    expect(again.status).toBe(200);
    expect(again.body.event.eventId).toBe(rerun.body.event.eventId);
    const events = await http('GET', '/v1/sessions/v-legacy/events?appName=legacy', { bearer: alice });
    expect((events.body.events as unknown[]).length).toBe(2);
  });

  it('refuses a View without the view scope, from a foreign Origin, or for another user (404), and a foreign View reads as absent', async () => {
    const ev = await sessionWithUiCall(http, alice, { appName: 'nonce', sessionId: 'v-who', tool: 'start-session' });
    const body = { appName: 'nonce', sessionId: 'v-who', eventId: ev.eventId, functionCallId: 'call-1' };
    expect((await http('POST', '/v1/views', { bearer: await token('alice', 'runtime'), body })).status).toBe(403);
    expect((await http('POST', '/v1/views', { bearer: alice, body, origin: 'https://evil.example' })).status).toBe(403);
    expect((await http('POST', '/v1/views', { bearer: alice, body, origin: null })).status).toBe(403);
    expect((await http('POST', '/v1/views', { bearer: alice, body: { ...body, userId: 'bob' } })).status).toBe(404);
    const bob = await token('bob', 'runtime view');
    expect((await http('POST', '/v1/views', { bearer: bob, body })).status).toBe(404);
    expect((await http('POST', '/v1/views', { bearer: alice, body: { ...body, functionCallId: 'call-9' } })).status).toBe(404);

    const opened = await open('nonce', 'v-who', ev);
    expect(opened.status).toBe(201);
    const viewId = opened.body.viewId as string;
    const otherTenant = await token('alice', 'runtime view', 'globex');
    for (const bearer of [bob, otherTenant]) {
      expect((await http('GET', `/v1/views/${viewId}`, { bearer })).status).toBe(404);
      expect((await http('DELETE', `/v1/views/${viewId}`, { bearer })).status).toBe(404);
      expect((await http('POST', `/v1/views/${viewId}:renew`, { bearer, headers: { 'x-apphost-view-grant': opened.body.grant } })).status).toBe(404);
    }
    expect((await http('GET', `/v1/views/${viewId}`, { bearer: alice })).body).toMatchObject({ state: 'ACTIVE' });
  });

  it('the grants appear in no document, host context, tool result or service log line', () => {
    expect(grants.length).toBeGreaterThanOrEqual(5);
    expect(logs.lines.length).toBeGreaterThan(100);
    const logText = logs.lines.map((line) => JSON.stringify(line)).join('\n');
    expect(logText).toContain('view opened');
    for (const grant of grants) {
      expect(logText).not.toContain(grant);
      for (const text of rendered) expect(text).not.toContain(grant);
    }
  });
});
