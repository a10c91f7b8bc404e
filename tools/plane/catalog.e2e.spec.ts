import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CatalogAppCatalog,
  CatalogClassifyBatch,
  CatalogModelCatalog,
  ConnCallTool,
  RegistryAcquireGeneration,
  RegistryPutProfile,
  RegistryPutToolset,
  type BoundGeneration,
  type GenerationHandle,
} from '@apphost/contracts';
import { MCP_REASONS, readUnderPolicy, requestOnGeneration, type PolicedRead } from '@apphost/mcp';
import { projectForModel, validateToolResult } from '@apphost/policy';
import {
  dropSchemasWithPrefix,
  startFakeProviders,
  startPrivateNats,
  uniquePrefix,
  CAPABILITY_GATED_RESOURCE,
  PUBLISHED_SERVERS,
  type PrivateNats,
} from '@apphost/testing';
import { bootCatalogPlane, fixtureSpec, matrixSpec, profile, publishedSpec, token, type CatalogPlane } from './catalog-harness';

/**
 * catalog-policy end to end: the real gateway, lifecycle-store, binding-registry and catalog-policy (booted from
 * their service definitions, as the plane composes them) on a private NATS, real PostgreSQL and real stdio MCP servers.
 */
const principal = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };
const audience = (sessionId: string) => ({ principal, session: { key: { tenant: 'acme', appName: 'app', userId: 'alice', sessionId }, incarnation: 1 } });
const SYSMON = PUBLISHED_SERVERS.systemMonitor;

/** A View's read bounds (8 MiB: the published PDF viewer's document is 4.3 MB). */
const READ_LIMITS = { maxItemBytes: 8 * 1024 * 1024, maxTotalBytes: 8 * 1024 * 1024 };

describe('catalog-policy in the plane', () => {
  const prefix = uniquePrefix();
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-catalog-'));
  const stateFile = path.join(stateDir, 'version');
  let nats: PrivateNats;
  let providers: { stop(): Promise<void> };
  let plane: CatalogPlane;
  let alice: string;

  const http = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${plane.base}${url}`, {
      method,
      headers: { authorization: `Bearer ${alice}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const put = (toolsetId: string, spec: Parameters<typeof plane.registry.client.request<typeof RegistryPutToolset>>[1]['spec']) =>
    plane.registry.client.request(RegistryPutToolset, { toolsetId, spec }, { timeoutMs: 30_000 });
  const model = (toolsetId: string, sessionId = 's-bus', extra: Record<string, unknown> = {}) =>
    plane.catalog.client.request(CatalogModelCatalog, { ...audience(sessionId), toolsets: [{ toolsetId, ...extra }], fresh: true }, { timeoutMs: 60_000 });
  const acquire = async (toolsetId: string, connectionClass: 'app-safe' | 'full', sessionId = 's-bus'): Promise<GenerationHandle & BoundGeneration> =>
    (await plane.registry.client.request(
      RegistryAcquireGeneration,
      { toolsetId, connectionClass, principal, session: audience(sessionId).session, holder: { kind: 'view', id: `v-${sessionId}` } },
      { timeoutMs: 30_000 },
    )) as GenerationHandle & BoundGeneration;
  const bound = (h: GenerationHandle): BoundGeneration => ({
    generationId: h.generationId,
    fence: h.fence,
    ownerInstanceId: h.ownerInstanceId,
    toolsetId: h.toolsetId,
    bindingGeneration: h.bindingGeneration,
    connectionClass: h.connectionClass,
  });

  beforeAll(async () => {
    nats = await startPrivateNats();
    providers = await startFakeProviders(nats.url, ['governed-operations', 'sealed-result-store', 'export-audit']);
    plane = await bootCatalogPlane(nats.url, prefix, {
      CATALOG_APP_TOOLSETS: JSON.stringify({ 'monitor-app': [{ toolsetId: 'sysmon' }] }),
      CATALOG_MODEL_CACHE_TTL_MS: '60000',
    });
    alice = await token('alice');
    await plane.registry.client.request(RegistryPutProfile, { profileId: 'p1', profile: profile() });
    expect((await put('sysmon', publishedSpec('systemMonitor', 'p1'))).status.state).toBe('PROFILE_BOUND');
  }, 120_000);

  afterAll(async () => {
    await plane?.stop();
    await providers?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  describe('acceptance: GET /v1/sessions/{id}/catalog on server-system-monitor', () => {
    it(`lists ${SYSMON.uiTool} with its handle and ui:// resource, and never the app-only ${SYSMON.appOnlyTool}`, async () => {
      expect((await http('POST', '/v1/sessions', { appName: 'monitor-app', sessionId: 'cat-1' })).status).toBe(201);
      const res = await http('GET', '/v1/sessions/cat-1/catalog?appName=monitor-app');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ sessionId: 'cat-1', appName: 'monitor-app', incarnation: 1, unavailable: [] });
      const tools = res.body.tools as { name: string; handleId: string; resourceUri?: string; connectionClass: string }[];
      const info = tools.find((t) => t.name === SYSMON.uiTool);
      expect(info).toMatchObject({ handleId: expect.stringMatching(/^th_/), resourceUri: SYSMON.resourceUri, connectionClass: 'app-safe' });
      expect(tools.map((t) => t.name)).not.toContain(SYSMON.appOnlyTool);
      expect(JSON.stringify(res.body)).not.toContain(SYSMON.appOnlyTool);
    }, 60_000);

    it('a session that does not exist (or belongs to someone else) is 404', async () => {
      expect((await http('GET', '/v1/sessions/nope/catalog?appName=monitor-app')).status).toBe(404);
      expect((await http('GET', '/v1/sessions/cat-1/catalog?appName=monitor-app&userId=bob')).status).toBe(404);
      expect((await http('GET', '/v1/sessions/cat-1/catalog')).status).toBe(400);
    });

    it('the app catalog of the bound generation has the app-only tool; the model catalog serves from its cache unless fresh', async () => {
      const h = await acquire('sysmon', 'app-safe');
      const app = await plane.catalog.client.request(CatalogAppCatalog, { generation: bound(h) }, { timeoutMs: 30_000 });
      expect(app.tools.map((t) => t.exposedName)).toEqual(expect.arrayContaining([SYSMON.appOnlyTool]));
      expect(app.tools.every((t) => t.execution.generationId === h.generationId && t.connectionClass === 'app-safe')).toBe(true);
      const first = await plane.catalog.client.request(
        CatalogModelCatalog,
        { ...audience('s-cache'), toolsets: [{ toolsetId: 'sysmon', namePrefix: 'mon' }] },
        { timeoutMs: 60_000 },
      );
      const second = await plane.catalog.client.request(
        CatalogModelCatalog,
        { ...audience('s-cache'), toolsets: [{ toolsetId: 'sysmon', namePrefix: 'mon' }] },
        { timeoutMs: 60_000 },
      );
      expect([first.cached, second.cached]).toEqual([false, true]);
      expect(first.tools.map((t) => t.exposedName)).toContain(`mon_${SYSMON.uiTool}`);
      expect(first.excluded).toContainEqual({ toolsetId: 'sysmon', name: SYSMON.appOnlyTool, reason: 'NOT_VISIBLE' });
    }, 60_000);
  });

  describe('projection on real server-system-monitor results', () => {
    it('keeps exactly content, isError and resultType; structuredContent and _meta never reach the model', async () => {
      const h = await acquire('sysmon', 'app-safe', 's-proj');
      const call = await requestOnGeneration(
        plane.registry.client,
        ConnCallTool,
        h,
        { callId: 'c1', name: SYSMON.uiTool, arguments: {} },
        { timeoutMs: 30_000 },
      );
      expect(call.kind).toBe('complete');
      const result = (call as { result: Record<string, unknown> }).result;
      validateToolResult(result);
      const projected = projectForModel(result as never) as Record<string, unknown>;
      expect(Object.keys(projected).sort()).toEqual(
        Object.keys(result)
          .filter((k) => ['content', 'isError', 'resultType'].includes(k))
          .sort(),
      );
      expect(projected).toEqual(Object.fromEntries(Object.entries(result).filter(([k]) => ['content', 'isError', 'resultType'].includes(k))));
    }, 60_000);

    it('an isError: true result keeps its error flag and content (system-monitor never answers isError, so a real hostile-fixture result)', async () => {
      const sysmon = await acquire('sysmon', 'full', 's-proj');
      // server-system-monitor answers an unknown tool with the JSON-RPC error MCP prescribes (-32602, invalid params):
      // the contract's INVALID_ARGUMENT with the protocol-error reason, nothing to project.
      await expect(
        requestOnGeneration(plane.registry.client, ConnCallTool, sysmon, { callId: 'c2', name: 'no-such-tool', arguments: {} }, { timeoutMs: 30_000 }),
      ).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { reason: MCP_REASONS.protocolError, operation: 'tools/call', mcpCode: -32602 },
      });
      await put('hostile-normal', fixtureSpec('hostile', 'p1', ['--mode=normal']));
      const h = await acquire('hostile-normal', 'full', 's-proj');
      const call = await requestOnGeneration(
        plane.registry.client,
        ConnCallTool,
        h,
        { callId: 'c3', name: 'poisoned', arguments: { a: 1 } },
        { timeoutMs: 30_000 },
      );
      const result = (call as { result: Record<string, unknown> }).result;
      expect(result['isError']).toBe(true);
      validateToolResult(result);
      const projected = projectForModel(result as never) as Record<string, unknown>;
      expect(projected).toEqual(Object.fromEntries(Object.entries(result).filter(([k]) => ['content', 'isError', 'resultType'].includes(k))));
      expect(projected['isError']).toBe(true);
    }, 60_000);
  });

  describe('visibility and reserved names through a real server', () => {
    beforeAll(() => put('matrix', matrixSpec('p1')), 60_000);

    it('model catalog: only model-visible, well-formed, non-reserved tools, prefixed', async () => {
      const c = await model('matrix', 's-bus', { namePrefix: 'mx' });
      expect(c.tools.map((t) => t.exposedName).sort()).toEqual(
        ['mx_pinned', 'mx_plain', 'mx_request_confirmation', 'mx_vis-absent', 'mx_vis-both', 'mx_vis-duplicates', 'mx_vis-model'].sort(),
      );
      const reasons = Object.fromEntries(c.excluded.map((e) => [e.name, e.reason]));
      expect(reasons).toMatchObject({
        'vis-app': 'NOT_VISIBLE',
        'vis-empty': 'NOT_VISIBLE',
        'vis-string': 'MALFORMED_VISIBILITY',
        'vis-upper': 'MALFORMED_VISIBILITY',
        'vis-number': 'MALFORMED_VISIBILITY',
        'vis-unknown': 'MALFORMED_VISIBILITY',
      });
      expect(reasons).toMatchObject({ adk_request_credential: 'RESERVED_NAME', transfer_to_agent: 'RESERVED_NAME', x_adk_request_input: 'RESERVED_NAME' });
      const withAdkPrefix = await model('matrix', 's-bus', { namePrefix: 'adk' });
      expect(withAdkPrefix.excluded).toContainEqual({ toolsetId: 'matrix', name: 'request_confirmation', reason: 'RESERVED_NAME' });
    }, 60_000);

    it("the toolset spec's own tool filter and name prefix select the model catalog when the caller names none", async () => {
      await put('matrix-selected', { ...matrixSpec('p1'), toolFilter: ['plain', 'vis-model'], namePrefix: 'sel' });
      const fromSpec = await model('matrix-selected');
      expect(fromSpec.tools.map((t) => t.exposedName).sort()).toEqual(['sel_plain', 'sel_vis-model']);
      const overridden = await model('matrix-selected', 's-bus', { namePrefix: 'mine', toolFilter: ['plain'] });
      expect(overridden.tools.map((t) => t.exposedName)).toEqual(['mine_plain']);
    }, 60_000);

    it('app catalog: only app-visible, well-formed, non-reserved tools, native names', async () => {
      const h = await acquire('matrix', 'app-safe');
      const app = await plane.catalog.client.request(CatalogAppCatalog, { generation: bound(h) }, { timeoutMs: 30_000 });
      expect(app.tools.map((t) => t.exposedName).sort()).toEqual(
        ['pinned', 'plain', 'request_confirmation', 'vis-absent', 'vis-app', 'vis-both', 'vis-duplicates'].sort(),
      );
      const narrowed = await plane.catalog.client.request(CatalogAppCatalog, { generation: bound(h), policy: { mode: 'deny-all' } }, { timeoutMs: 30_000 });
      expect(narrowed.tools).toEqual([]);
    }, 60_000);

    it('policed resource reads (as a View reads, of the owner): in-policy passes with a canonical URI; a mixed response is rejected whole; an over-size item too', async () => {
      const h = bound(await acquire('matrix', 'app-safe'));
      const policy = { exact: ['ui://catalog-matrix/widget.html'], prefixes: ['ui://catalog-matrix/mixed', 'ui://catalog-matrix/big'] };
      const read = (uri: string, over: Partial<PolicedRead> = {}) => readUnderPolicy(plane.catalog.client, h, { uri, policy, limits: READ_LIMITS, ...over });
      const ok = await read('UI://Catalog-Matrix/widget.html');
      expect(ok.contents).toEqual([expect.objectContaining({ uri: 'ui://catalog-matrix/widget.html', mimeType: 'text/html;profile=mcp-app' })]);
      await expect(read('ui://catalog-matrix/mixed')).rejects.toMatchObject({
        code: 'PERMISSION_DENIED',
        details: { reason: 'RESOURCE_POLICY_DENIED', side: 'response', mixed: true },
      });
      await expect(read('ui://catalog-matrix/other')).rejects.toMatchObject({ code: 'PERMISSION_DENIED', details: { side: 'request' } });
      await expect(read('ui://catalog-matrix/big', { limits: { maxItemBytes: 1024, maxTotalBytes: READ_LIMITS.maxTotalBytes } })).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
      });
    }, 60_000);
  });

  describe('bounded discovery against the hostile fixture: the toolset is denied whole, never listed in part', () => {
    it.each([
      ['endless', [], 'RESOURCE_EXHAUSTED'],
      ['repeat-cursor', [], 'RESOURCE_EXHAUSTED'],
      ['many-items', [], 'RESOURCE_EXHAUSTED'],
      ['oversized', [], 'RESOURCE_EXHAUSTED'],
      ['slow', ['--delay-ms=6000'], 'DEADLINE_EXCEEDED'],
    ])(
      '--mode=%s',
      async (mode, extra, code) => {
        const id = `hostile-${mode}`;
        await put(id, fixtureSpec('hostile', 'p1', [`--mode=${mode}`, ...extra]));
        // The model catalog answers without the toolset's tools and says why; the View's app catalog is denied.
        expect(await model(id)).toMatchObject({ tools: [], unavailable: [{ toolsetId: id, code, message: expect.stringContaining(id) }] });
        const h = await acquire(id, 'app-safe');
        await expect(plane.catalog.client.request(CatalogAppCatalog, { generation: bound(h) }, { timeoutMs: 30_000 })).rejects.toMatchObject({ code });
      },
      60_000,
    );

    it('a policed read answered with an out-of-policy URI is rejected', async () => {
      await put('hostile-normal', fixtureSpec('hostile', 'p1', ['--mode=normal']));
      const h = bound(await acquire('hostile-normal', 'app-safe'));
      await expect(
        readUnderPolicy(plane.catalog.client, h, { uri: 'ui://hostile/app.html', policy: { prefixes: ['ui://hostile'] }, limits: READ_LIMITS }),
      ).rejects.toMatchObject({
        code: 'PERMISSION_DENIED',
        details: { side: 'response', mixed: false },
      });
    }, 60_000);
  });

  describe('two-class discovery and batch classification (capability-gated fixture)', () => {
    beforeAll(() => put('gated', fixtureSpec('capability-gated', 'p1')), 60_000);

    it('metadata that differs by client capabilities: the UI declaration comes from the app-safe class and executes there', async () => {
      const c = await model('gated');
      const widget = c.tools.find((t) => t.nativeName === 'show-widget')!;
      expect(widget).toMatchObject({ connectionClass: 'app-safe', resourceUri: CAPABILITY_GATED_RESOURCE });
      expect(c.tools.find((t) => t.nativeName === 'observed-capabilities')).toMatchObject({ connectionClass: 'full', resourceUri: null });
    }, 60_000);

    it('one immutable snapshot of exact handles: ui, non-ui and mixed batches; an unknown tool fails closed', async () => {
      const classify = (calls: { callId: string; name: string }[]) =>
        plane.catalog.client.request(CatalogClassifyBatch, { ...audience('s-bus'), toolsets: [{ toolsetId: 'gated' }], calls }, { timeoutMs: 60_000 });
      const ui = await classify([{ callId: 'a', name: 'show-widget' }]);
      expect(ui).toMatchObject({ classification: 'ui', calls: [{ callId: 'a', uiAssociated: true, handle: { connectionClass: 'app-safe' } }] });
      expect((await classify([{ callId: 'b', name: 'observed-capabilities' }])).classification).toBe('non-ui');
      const mixed = await classify([
        { callId: 'a', name: 'show-widget' },
        { callId: 'b', name: 'observed-capabilities' },
      ]);
      expect(mixed.classification).toBe('mixed');
      expect(mixed.snapshotDigest).toMatch(/^[0-9a-f]{64}$/);
      await expect(classify([{ callId: 'x', name: 'not-there' }])).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        details: { reason: 'TOOL_NOT_IN_CATALOG', callIds: ['x'] },
      });
    }, 60_000);

    it('a tool removed between listing and call is refused at batch admission (fresh listing, never the cache)', async () => {
      fs.writeFileSync(stateFile, '0');
      await put('removal', matrixSpec('p1', [`--state-file=${stateFile}`]));
      expect((await model('removal', 's-removal')).tools.map((t) => t.nativeName)).toContain('plain');
      fs.writeFileSync(stateFile, '100');
      await expect(
        plane.catalog.client.request(
          CatalogClassifyBatch,
          { ...audience('s-removal'), toolsets: [{ toolsetId: 'removal' }], calls: [{ callId: 'c', name: 'plain' }] },
          { timeoutMs: 60_000 },
        ),
      ).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'TOOL_NOT_IN_CATALOG' } });
    }, 60_000);
  });

  describe('tool-definition pinning', () => {
    it("the hostile fixture's schema drift quarantines echo from both catalogs; approval pins only the reviewed definition", async () => {
      await put('drift', fixtureSpec('hostile', 'p1', ['--mode=drift']));
      expect((await model('drift', 's-drift')).tools.map((t) => t.nativeName)).toContain('echo');
      const second = await model('drift', 's-drift');
      expect(second.excluded).toContainEqual({ toolsetId: 'drift', name: 'echo', reason: 'QUARANTINED' });
      const h = await acquire('drift', 'app-safe', 's-drift');
      // Pins are per class: the app-safe declaration is first seen by the app catalog, then drifts like the other.
      expect((await plane.catalog.client.request(CatalogAppCatalog, { generation: bound(h) }, { timeoutMs: 30_000 })).tools.map((t) => t.nativeName)).toContain(
        'echo',
      );
      const app = await plane.catalog.client.request(CatalogAppCatalog, { generation: bound(h) }, { timeoutMs: 30_000 });
      expect(app.excluded).toContainEqual({ toolsetId: 'drift', name: 'echo', reason: 'QUARANTINED' });
      expect(app.tools.map((t) => t.nativeName)).toContain('poisoned');
      // The server drifts on every listing: approving one candidate does not admit the next one.
      const approved = await http('POST', '/v1/toolsets/drift/tools/echo:approve', {});
      expect(approved.status).toBe(200);
      expect((await model('drift', 's-drift')).excluded).toContainEqual({ toolsetId: 'drift', name: 'echo', reason: 'QUARANTINED' });
    }, 60_000);

    it('a changed description and schema → quarantined; visible again after POST /v1/toolsets/{id}/tools/{name}:approve', async () => {
      const file = path.join(stateDir, 'pinned');
      fs.writeFileSync(file, '0');
      await put('pinning', matrixSpec('p1', [`--state-file=${file}`]));
      const first = await model('pinning', 's-pin');
      const original = first.tools.find((t) => t.nativeName === 'pinned')!;
      fs.writeFileSync(file, '1');
      const drifted = await model('pinning', 's-pin');
      expect(drifted.tools.map((t) => t.nativeName)).not.toContain('pinned');
      expect(drifted.excluded).toContainEqual({ toolsetId: 'pinning', name: 'pinned', reason: 'QUARANTINED' });
      expect((await http('POST', '/v1/toolsets/pinning/tools/pinned:approve', { fingerprint: original.fingerprint })).status).toBe(409);
      const approved = await http('POST', '/v1/toolsets/pinning/tools/pinned:approve', {});
      expect(approved.status).toBe(200);
      expect((approved.body.approved as { previousFingerprint: string }[])[0].previousFingerprint).toBe(original.fingerprint);
      const after = await model('pinning', 's-pin');
      const again = after.tools.find((t) => t.nativeName === 'pinned')!;
      expect(again.declaration).toMatchObject({ description: 'Pinned tool, revised 1.' });
      expect(again.fingerprint).not.toBe(original.fingerprint);
      expect((await http('POST', '/v1/toolsets/pinning/tools/never-seen:approve', {})).status).toBe(404);
    }, 60_000);
  });
});
