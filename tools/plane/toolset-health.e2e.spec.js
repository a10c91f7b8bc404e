"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
const node_net_1 = __importDefault(require("node:net"));
const contracts_1 = require("@apphost/contracts");
const testing_1 = require("@apphost/testing");
const catalog_harness_1 = require("./catalog-harness");
const tool_batches_harness_1 = require("./tool-batches-harness");
/**
 * One bad toolset does not take down an app: the real gateway, catalog-policy, binding-registry and
 * governed-operations on a private NATS, with real MCP servers that cannot start (a missing command, a process that
 * exits at once, a Streamable HTTP server on a closed port) beside a healthy one.
 */
jest.setTimeout(60_000);
const principal = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };
const CRASHING = ['-e', "console.error('starting'); console.error('boom: bad config'); process.exit(3)"];
/** A TCP forwarder from `port` to `target` (a server appearing on a port that refused connections before). */
async function forward(port, target) {
    const sockets = new Set();
    const server = node_net_1.default.createServer((inbound) => {
        const outbound = node_net_1.default.connect(Number(target.port), target.hostname);
        for (const s of [inbound, outbound]) {
            sockets.add(s);
            s.on('error', () => undefined);
            s.on('close', () => sockets.delete(s));
        }
        inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
    return {
        stop: () => new Promise((resolve) => {
            for (const s of sockets)
                s.destroy();
            server.close(() => resolve());
        }),
    };
}
describe('toolset health in the plane', () => {
    const prefix = (0, testing_1.uniquePrefix)();
    let nats;
    let providers;
    let plane;
    let upstream;
    let alice;
    let refusedPort;
    let latePort;
    const http = async (method, url, body) => {
        const res = await fetch(`${plane.base}${url}`, {
            method,
            headers: { authorization: `Bearer ${alice}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
            body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) };
    };
    const catalog = async (appName, sessionId, fresh = false) => {
        const res = await http('GET', `/v1/sessions/${sessionId}/catalog?appName=${appName}${fresh ? '&fresh=true' : ''}`);
        expect(res.status).toBe(200);
        return res.body;
    };
    const session = async (appName, sessionId) => expect((await http('POST', '/v1/sessions', { appName, sessionId })).status).toBe(201);
    beforeAll(async () => {
        nats = await (0, testing_1.startPrivateNats)();
        providers = await (0, testing_1.startFakeProviders)(nats.url, ['export-audit']);
        [upstream, refusedPort, latePort] = await Promise.all([(0, testing_1.startHttpFixture)('stateful-nonce'), (0, testing_1.freePort)(), (0, testing_1.freePort)()]);
        plane = await (0, tool_batches_harness_1.bootBatchPlane)(nats.url, prefix, {
            CATALOG_APP_TOOLSETS: JSON.stringify({
                'mixed-app': [{ toolsetId: 'healthy' }, { toolsetId: 'missing' }, { toolsetId: 'crashing' }, { toolsetId: 'refused' }],
                'dead-app': [{ toolsetId: 'missing' }, { toolsetId: 'crashing' }],
                'late-app': [{ toolsetId: 'late' }],
                'bare-app': [{ toolsetId: 'healthy' }, { toolsetId: 'crashing-bare' }],
            }),
            CATALOG_MODEL_CACHE_TTL_MS: '60000',
        });
        alice = await (0, catalog_harness_1.token)('alice');
        const put = (toolsetId, spec) => plane.registry.client.request(contracts_1.RegistryPutToolset, { toolsetId, spec }, { timeoutMs: 30_000 });
        const http = (port, namePrefix) => ({
            connection: { kind: 'http', url: `http://127.0.0.1:${port}/mcp` },
            namePrefix,
            profileId: null,
        });
        await Promise.all([
            put('healthy', (0, catalog_harness_1.fixtureSpec)('stateful-nonce', null)),
            put('missing', { connection: { kind: 'stdio', command: '/nonexistent/apphost-mcp-server' }, namePrefix: 'gone', profileId: null }),
            put('crashing', { connection: { kind: 'stdio', command: process.execPath, args: CRASHING }, namePrefix: 'crash', profileId: null }),
            put('crashing-bare', { connection: { kind: 'stdio', command: process.execPath, args: CRASHING }, profileId: null }),
            put('refused', http(refusedPort, 'remote')),
            put('late', http(latePort, 'late')),
        ]);
    }, 120_000);
    afterAll(async () => {
        await plane?.stop();
        await upstream?.stop();
        await providers?.stop();
        await nats?.stop();
        await (0, testing_1.dropSchemasWithPrefix)(prefix);
    });
    it('the catalog serves the healthy toolset and names each unavailable one with its cause', async () => {
        await session('mixed-app', 'h-catalog');
        const body = await catalog('mixed-app', 'h-catalog');
        expect(body.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['whoami', 'start-session']));
        expect(new Set(body.tools.map((t) => t.toolsetId))).toEqual(new Set(['healthy']));
        const byId = Object.fromEntries(body.unavailable.map((u) => [u.toolsetId, u]));
        expect(Object.keys(byId).sort()).toEqual(['crashing', 'missing', 'refused']);
        expect(byId['missing']).toEqual({
            toolsetId: 'missing',
            code: 'UNAVAILABLE',
            reason: 'MCP_CONNECT_FAILED',
            message: 'toolset missing: connect failed: command not found: /nonexistent/apphost-mcp-server (ENOENT)',
        });
        expect(byId['crashing']).toMatchObject({ code: 'UNAVAILABLE', reason: 'MCP_CONNECT_FAILED' });
        expect(byId['crashing'].message).toBe('toolset crashing: connect failed: the server exited with code 3 before initialize; last stderr line: boom: bad config');
        expect(byId['refused']).toMatchObject({ code: 'UNAVAILABLE', reason: 'MCP_CONNECT_FAILED' });
        expect(byId['refused'].message).toBe(`toolset refused: connect failed: connection refused by 127.0.0.1:${refusedPort} (ECONNREFUSED)`);
    });
    it('every toolset unavailable is still a 200: no tools, each cause listed', async () => {
        await session('dead-app', 'h-dead');
        const body = await catalog('dead-app', 'h-dead');
        expect(body.tools).toEqual([]);
        expect(body.unavailable.map((u) => u.toolsetId).sort()).toEqual(['crashing', 'missing']);
    });
    it('a failure is not cached: the toolset is served once its server answers, without fresh=true', async () => {
        await session('late-app', 'h-late');
        const before = await catalog('late-app', 'h-late');
        expect(before.tools).toEqual([]);
        expect(before.unavailable).toEqual([expect.objectContaining({ toolsetId: 'late', message: expect.stringContaining('ECONNREFUSED') })]);
        const forwarder = await forward(latePort, new URL(upstream.url));
        try {
            const after = await catalog('late-app', 'h-late');
            expect(after.unavailable).toEqual([]);
            expect(after.tools.map((t) => t.name)).toContain('late_whoami');
            // A complete catalog is cached again.
            const cached = await plane.catalog.client.request(contracts_1.CatalogClassifyBatch, {
                principal,
                session: { key: { tenant: 'acme', appName: 'late-app', userId: 'alice', sessionId: 'h-late' }, incarnation: 1 },
                calls: [{ callId: 'c1', name: 'late_whoami' }],
            });
            expect(cached).toMatchObject({ unavailable: [], unreachable: [], calls: [{ callId: 'c1', handle: { toolsetId: 'late' } }] });
        }
        finally {
            await forwarder.stop();
        }
    });
    it('a batch runs the healthy call and fails only the calls of unavailable toolsets, typed, in call order', async () => {
        await session('mixed-app', 'h-batch');
        const res = await http('POST', '/v1/sessions/h-batch/tool-batches', {
            appName: 'mixed-app',
            invocationId: 'inv-h',
            calls: [
                { functionCallId: 'bad-1', tool: 'crash_whoami', arguments: {} },
                { functionCallId: 'ok', tool: 'whoami', arguments: {} },
                { functionCallId: 'bad-2', tool: 'remote_echo', arguments: {} },
            ],
        });
        expect(res.status).toBe(200);
        const ev = res.body;
        expect(ev.rejection).toBeNull();
        expect(ev.functionResponses.map((r) => r.functionCallId)).toEqual(['bad-1', 'ok', 'bad-2']);
        const [crashed, ok, refused] = ev.functionResponses;
        expect(ok.response).toMatchObject({ structuredContent: { transport: 'stdio' } });
        expect(crashed.response).toEqual({
            error: {
                code: 'TOOLSET_UNAVAILABLE',
                message: expect.stringContaining('exited with code 3 before initialize; last stderr line: boom: bad config'),
                toolsetIds: ['crashing'],
                cause: { code: 'UNAVAILABLE', reason: 'MCP_CONNECT_FAILED' },
            },
        });
        expect(refused.response).toMatchObject({
            error: { code: 'TOOLSET_UNAVAILABLE', toolsetIds: ['refused'], message: expect.stringContaining('ECONNREFUSED') },
        });
    });
    it('without a name prefix, an unknown name may belong to the unavailable toolset: that call fails alone', async () => {
        await session('bare-app', 'h-bare');
        const res = await http('POST', '/v1/sessions/h-bare/tool-batches', {
            appName: 'bare-app',
            invocationId: 'inv-b',
            calls: [
                { functionCallId: 'ok', tool: 'whoami', arguments: {} },
                { functionCallId: 'maybe', tool: 'some-tool-of-the-broken-server', arguments: {} },
            ],
        });
        expect(res.status).toBe(200);
        const [ok, maybe] = res.body.functionResponses;
        expect(ok.response).toMatchObject({ structuredContent: { transport: 'stdio' } });
        expect(maybe.response).toMatchObject({
            error: { code: 'TOOLSET_UNAVAILABLE', toolsetIds: ['crashing-bare'], message: expect.stringContaining('boom: bad config') },
        });
    });
    it('the OpenAPI document describes the catalog answer with its unavailable toolsets', async () => {
        const doc = (await (await fetch(`${plane.base}/v1/openapi.json`)).json());
        const schema = doc.paths['/v1/sessions/{sessionId}/catalog'].get.responses['200'].content['application/json'].schema;
        expect(schema.required).toContain('unavailable');
        expect(schema.properties.unavailable.items.required.sort()).toEqual(['code', 'message', 'reason', 'toolsetId']);
    });
    it('a name no toolset can own still fails the whole batch (TOOL_NOT_IN_CATALOG)', async () => {
        await session('mixed-app', 'h-unknown');
        const res = await http('POST', '/v1/sessions/h-unknown/tool-batches', {
            appName: 'mixed-app',
            invocationId: 'inv-u',
            calls: [{ functionCallId: 'u', tool: 'nobody_has_this', arguments: {} }],
        });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ error: { code: 'FAILED_PRECONDITION', details: { reason: 'TOOL_NOT_IN_CATALOG' } } });
    });
});
//# sourceMappingURL=toolset-health.e2e.spec.js.map