import fs from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { JSON_RPC_CODE_BY_ERROR } from '@apphost/contracts';
import { publishedPdf, publishedSystemMonitor, SAMPLE_PDF_PATH } from '@apphost/testing';
import { fixtureSpec, matrixSpec, publishedSpec } from './catalog-harness';
import { callsFile, executed, openView, resultOf, rpcErrorOf, startRpcPlane, structuredOf, type LiveView, type RpcPlane } from './view-rpc-harness';
import { VIEW_ORIGIN, viewProfile } from './views-harness';

/**
 * The View RPC end to end (`POST /v1/views/{viewId}/rpc` through the real gateway and governed-operations, real
 * NATS, PostgreSQL, Redis, stdio servers): the JSON-RPC surface, the published servers' own app-only calls,
 * visibility on the View's own server, and calls reaching the exact connection that made the View.
 * Budget: ~45 s to boot and bind (two published servers, the PDF View is 4.3 MB), ~40 s of tests.
 */
jest.setTimeout(150_000);

const PDF = publishedPdf();
const SYSMON = publishedSystemMonitor();
const TRANSFER = 'transfer_to_agent';

describe('View RPC in the plane', () => {
  let rpcPlane: RpcPlane;
  let alice: string;
  let matrixCalls: string;
  let nonceCalls: string;
  let driftState: string;
  const rpc = () => rpcPlane.rpc;

  beforeAll(async () => {
    const prefix = `rpc-main-${process.pid}`;
    matrixCalls = callsFile(prefix, 'matrix');
    nonceCalls = callsFile(prefix, 'nonce');
    driftState = callsFile(prefix, 'drift-state');
    fs.writeFileSync(driftState, '0');
    rpcPlane = await startRpcPlane({
      apps: { desk: ['sysmon', 'pdf'], matrix: ['matrix', 'nonce'], drift: ['drift'], nonce: ['nonce'] },
      profiles: { p1: viewProfile() },
      toolsets: {
        sysmon: publishedSpec('systemMonitor', 'p1'),
        pdf: { connection: PDF.connection, profileId: 'p1' },
        matrix: matrixSpec('p1', [`--calls-file=${matrixCalls}`]),
        nonce: fixtureSpec('stateful-nonce', 'p1', [`--calls-file=${nonceCalls}`]),
        drift: matrixSpec('p1', [`--state-file=${driftState}`, `--calls-file=${matrixCalls}.drift`]),
      },
    });
    alice = await rpcPlane.bearer('alice');
  }, 120_000);

  afterAll(async () => {
    await rpcPlane?.stop();
    for (const file of [matrixCalls, nonceCalls, driftState, `${matrixCalls}.drift`]) fs.rmSync(file, { force: true });
  });

  describe('the JSON-RPC surface', () => {
    let view: LiveView;
    beforeAll(async () => {
      view = await openView(rpcPlane.http, alice, { appName: 'matrix', sessionId: 's-surface', tool: 'vis-both' });
    });

    it('ping answers an empty result with the same id; notifications answer 202 with no body', async () => {
      const ping = await rpc().request(view, 'ping', {}, { id: 41 });
      expect(ping.status).toBe(200);
      expect(ping.body).toEqual({ jsonrpc: '2.0', id: 41, result: {} });
      for (const [method, params] of [
        ['ui/notifications/initialized', {}],
        ['ui/notifications/size-changed', { width: 640, height: 480 }],
        ['notifications/message', { level: 'info', data: 'hello from the View' }],
      ] as const) {
        const sent = await rpc().notify(view, method, params);
        expect({ method, status: sent.status, text: sent.text }).toEqual({ method, status: 202, text: '' });
      }
    });

    it('an unknown method is -32601, a batch array and a non-JSON-RPC message -32600; error.data carries the AppHost code', async () => {
      const unknown = rpcErrorOf(await rpc().request(view, 'sampling/createMessage', { messages: [] }, { id: 'u-1' }));
      expect(unknown).toMatchObject({ code: -32601, data: { code: 'NOT_FOUND', reason: 'RPC_METHOD_NOT_FOUND', retryable: false } });
      const batch = await rpc().send(view, [{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
      expect(batch.body).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, data: { code: 'INVALID_ARGUMENT', reason: 'RPC_INVALID_REQUEST' } },
      });
      const noVersion = await rpc().send(view, { id: 'nv', method: 'ping' });
      expect(rpcErrorOf(noVersion)).toMatchObject({ code: -32600, data: { reason: 'RPC_INVALID_REQUEST' } });
      const badParams = rpcErrorOf(await rpc().request(view, 'tools/call', { name: 42 }));
      expect(badParams).toMatchObject({ code: -32602, data: { code: 'INVALID_ARGUMENT', reason: 'RPC_INVALID_PARAMS' } });
      // The numeric codes are the one table's.
      expect(JSON_RPC_CODE_BY_ERROR.PERMISSION_DENIED).toBe(-32003);
    });

    it('authentication, Origin and grant failures are HTTP error envelopes: 401, 403, 404', async () => {
      const ping = { jsonrpc: '2.0', id: 1, method: 'ping', params: {} };
      const noBearer = await fetch(`${rpcPlane.plane.base}/v1/views/${view.viewId}/rpc`, {
        method: 'POST',
        headers: { origin: VIEW_ORIGIN, 'content-type': 'application/json', 'x-apphost-view-grant': view.grant },
        body: JSON.stringify(ping),
      });
      expect(noBearer.status).toBe(401);
      const wrongGrant = await rpc().send(view, ping, { grant: 'x'.repeat(43) });
      expect(wrongGrant.status).toBe(403);
      expect(wrongGrant.body.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'VIEW_GRANT_INVALID' } });
      expect((await rpc().send(view, ping, { origin: 'https://evil.example' })).status).toBe(403);
      expect((await rpc().send({ ...view, viewId: `vw-${'0'.repeat(32)}` }, ping)).status).toBe(404);
      const bob = await rpcPlane.bearer('bob');
      expect((await rpc().send(view, ping, { bearer: bob })).status).toBe(404);
    });

    it('tools/list is the View server’s app-visible tools only: no model-only, reserved or other-toolset tool', async () => {
      const listed = resultOf(await rpc().request(view, 'tools/list', {}));
      const names = (listed.tools as Array<{ name: string }>).map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['vis-app', 'vis-both', 'vis-absent', 'plain']));
      for (const hidden of ['vis-model', 'vis-empty', TRANSFER, 'follow-up', 'start-session']) expect(names).not.toContain(hidden);
    });

    it('resources/list and resources/templates/list leave out what the resource policy does not allow', async () => {
      const listed = resultOf(await rpc().request(view, 'resources/list', {}));
      expect(listed.resources).toEqual([expect.objectContaining({ uri: 'ui://catalog-matrix/widget.html' })]);
      const templates = resultOf(await rpc().request(view, 'resources/templates/list', {}));
      expect(templates.resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'ui://catalog-matrix/pages/{name}' })]);
    });
  });

  describe('published servers over stdio', () => {
    let monitor: LiveView;
    let viewer: LiveView;
    beforeAll(async () => {
      monitor = await openView(rpcPlane.http, alice, { appName: 'desk', sessionId: 's-desk', tool: SYSMON.uiTool.name, arguments: SYSMON.uiTool.arguments });
      viewer = await openView(rpcPlane.http, alice, {
        appName: 'desk',
        sessionId: 's-desk',
        tool: PDF.uiTool.name,
        arguments: PDF.uiTool.arguments,
        existingSession: true,
        invocationId: 'inv-pdf',
        functionCallId: 'call-pdf',
      });
    });

    it('the system monitor View polls its app-only poll-system-stats: the same shape a direct SDK call gets', async () => {
      const direct = new Client({ name: 'rpc-e2e-direct', version: '1' }, {});
      const { command, args, cwd } = SYSMON.connection;
      await direct.connect(new StdioClientTransport({ command, args, cwd, env: getDefaultEnvironment(), stderr: 'ignore' }));
      try {
        const expected = (await direct.callTool({ name: 'poll-system-stats', arguments: {} })) as { structuredContent: Record<string, unknown> };
        for (let i = 0; i < 3; i++) {
          const polled = await rpc().call(monitor, 'poll-system-stats');
          expect(resultOf(polled).isError ?? false).toBe(false);
          expect(Object.keys(structuredOf(polled)).sort()).toEqual(Object.keys(expected.structuredContent).sort());
        }
      } finally {
        await direct.close();
      }
    });

    it('the PDF viewer View reads its document through app-only read_pdf_bytes: the exact bytes of the file', async () => {
      const url = PDF.uiTool.arguments.url as string;
      const read = structuredOf(await rpc().call(viewer, 'read_pdf_bytes', { url, offset: 0, byteCount: 1024 }));
      const file = fs.readFileSync(SAMPLE_PDF_PATH);
      expect(read).toMatchObject({ offset: 0, totalBytes: file.length });
      expect(Buffer.from(read.bytes as string, 'base64')).toEqual(file.subarray(0, Math.min(1024, file.length)));
    });

    it("a View of one server calling another server's app-only tool is TOOL_NOT_APP_VISIBLE, both ways", async () => {
      const crossed = rpcErrorOf(await rpc().call(monitor, 'read_pdf_bytes', { url: PDF.uiTool.arguments.url }));
      expect(crossed).toMatchObject({ code: JSON_RPC_CODE_BY_ERROR.PERMISSION_DENIED, data: { code: 'PERMISSION_DENIED', reason: 'TOOL_NOT_APP_VISIBLE' } });
      expect(rpcErrorOf(await rpc().call(viewer, 'poll-system-stats')).data).toMatchObject({ reason: 'TOOL_NOT_APP_VISIBLE' });
    });
  });

  describe('visibility on the View’s own server (counted at the fixture)', () => {
    let view: LiveView;
    beforeAll(async () => {
      view = await openView(rpcPlane.http, alice, { appName: 'matrix', sessionId: 's-vis', tool: 'vis-both' });
    });

    it('an app-only tool executes once', async () => {
      const before = executed(matrixCalls, 'vis-app');
      expect(resultOf(await rpc().call(view, 'vis-app')).content).toEqual([{ type: 'text', text: 'called vis-app' }]);
      expect(executed(matrixCalls, 'vis-app')).toBe(before + 1);
    });

    it.each([
      ['a model-only tool', 'vis-model'],
      ['a tool with empty visibility', 'vis-empty'],
      ['an unknown tool', 'no-such-tool'],
      ['a framework-reserved name', TRANSFER],
    ])('%s is TOOL_NOT_APP_VISIBLE and nothing executes', async (_, name) => {
      const denied = rpcErrorOf(await rpc().call(view, name));
      expect(denied).toMatchObject({ code: -32003, data: { code: 'PERMISSION_DENIED', reason: 'TOOL_NOT_APP_VISIBLE' } });
      expect(executed(matrixCalls, name)).toBe(0);
    });

    it('a tool of another toolset of the same session is TOOL_NOT_APP_VISIBLE and nothing executes there', async () => {
      const other = await openView(rpcPlane.http, alice, {
        appName: 'matrix',
        sessionId: 's-vis',
        tool: 'start-session',
        existingSession: true,
        invocationId: 'inv-nonce',
        functionCallId: 'call-nonce',
      });
      const before = executed(nonceCalls, 'whoami');
      expect(rpcErrorOf(await rpc().call(view, 'whoami')).data).toMatchObject({ reason: 'TOOL_NOT_APP_VISIBLE' });
      expect(rpcErrorOf(await rpc().call(other, 'vis-app')).data).toMatchObject({ reason: 'TOOL_NOT_APP_VISIBLE' });
      expect(executed(nonceCalls, 'whoami')).toBe(before);
      // Each View still reaches its own server.
      expect(structuredOf(await rpc().call(other, 'whoami'))).toMatchObject({ nonce: other.toolResult.structuredContent.nonce });
    });

    it('arguments failing the tool’s inputSchema are -32602 TOOL_ARGUMENTS_INVALID, nothing executed', async () => {
      const before = executed(matrixCalls, 'plain');
      const denied = rpcErrorOf(await rpc().call(view, 'plain', { q: 42 }));
      expect(denied).toMatchObject({ code: -32602, data: { code: 'INVALID_ARGUMENT', reason: 'TOOL_ARGUMENTS_INVALID' } });
      expect(executed(matrixCalls, 'plain')).toBe(before);
    });

    it('a tool whose visibility changed after bootstrap is refused at the barrier, nothing executed', async () => {
      const drifting = await openView(rpcPlane.http, alice, { appName: 'drift', sessionId: 's-drift', tool: 'vis-both' });
      const log = `${matrixCalls}.drift`;
      expect(resultOf(await rpc().call(drifting, 'vis-app')).isError ?? false).toBe(false);
      expect(executed(log, 'vis-app')).toBe(1);
      fs.writeFileSync(driftState, '1000'); // vis-app is now ['model']
      expect(rpcErrorOf(await rpc().call(drifting, 'vis-app')).data).toMatchObject({ code: 'PERMISSION_DENIED', reason: 'TOOL_NOT_APP_VISIBLE' });
      expect(executed(log, 'vis-app')).toBe(1);
    });
  });

  describe('the same connection', () => {
    it('the model’s start-session mints a nonce; the View’s app-only follow-up with it succeeds on that connection', async () => {
      const view = await openView(rpcPlane.http, alice, { appName: 'nonce', sessionId: 's-same', tool: 'start-session' });
      const minted = view.toolResult.structuredContent as { nonce: string; connectionId: string };
      const followed = structuredOf(await rpc().call(view, 'follow-up', { nonce: minted.nonce }));
      expect(followed).toMatchObject({ ok: true, connectionId: minted.connectionId });
      expect(structuredOf(await rpc().call(view, 'whoami'))).toMatchObject({ nonce: minted.nonce, connectionId: minted.connectionId });
    });

    it('two principals, and two sessions of one principal, each see only their own connection', async () => {
      const bob = await rpcPlane.bearer('bob');
      const views = await Promise.all([
        openView(rpcPlane.http, alice, { appName: 'nonce', sessionId: 's-own-1', tool: 'start-session' }),
        openView(rpcPlane.http, alice, { appName: 'nonce', sessionId: 's-own-2', tool: 'start-session' }),
        openView(rpcPlane.http, bob, { appName: 'nonce', sessionId: 's-own-1', tool: 'start-session' }),
      ]);
      const minted = views.map((v) => v.toolResult.structuredContent as { nonce: string; connectionId: string });
      expect(new Set(minted.map((m) => m.connectionId)).size).toBe(3);
      for (const [i, view] of views.entries()) {
        expect(structuredOf(await rpc().call(view, 'follow-up', { nonce: minted[i].nonce }))).toMatchObject({ ok: true, connectionId: minted[i].connectionId });
        // Another connection's nonce is unknown here: the call ran on this View's own connection and failed there.
        const foreign = resultOf(await rpc().call(view, 'follow-up', { nonce: minted[(i + 1) % 3].nonce }));
        expect(foreign).toMatchObject({ isError: true, content: [{ type: 'text', text: 'unknown nonce for this connection' }] });
      }
    });
  });
});
