"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
const node_fs_1 = __importDefault(require("node:fs"));
const node_http_1 = __importDefault(require("node:http"));
const node_os_1 = __importDefault(require("node:os"));
const node_path_1 = __importDefault(require("node:path"));
const bus_1 = require("@apphost/bus");
const contracts_1 = require("@apphost/contracts");
const testing_1 = require("@apphost/testing");
const plane_process_1 = require("./plane-process");
describe('all-in-one plane', () => {
    let home;
    beforeEach(() => {
        // 0700, like a fresh clone in a home directory or mktemp -d: as root the embedded PostgreSQL runs as the postgres
        // user, who cannot enter it, and must still start and find its data again after a restart.
        home = node_fs_1.default.mkdtempSync(node_path_1.default.join(node_os_1.default.tmpdir(), 'apphost-plane-'));
        node_fs_1.default.chmodSync(home, 0o700);
    });
    afterEach(() => node_fs_1.default.rmSync(home, { recursive: true, force: true }));
    it('boots with no external services, serves every service, stops on SIGINT and keeps its data across a restart', async () => {
        const env = { APPHOST_HOME: home, NATS_URL: '', DATABASE_URL: '', REDIS_URL: '' };
        const first = await (0, plane_process_1.startPlane)(env);
        const tokenFile = node_path_1.default.join(home, 'dev-token');
        expect(node_fs_1.default.statSync(tokenFile).mode & 0o777).toBe(0o600);
        const before = await (0, plane_process_1.listServices)(first.base, tokenFile);
        expect(before.map((s) => s.status)).toEqual(Array(7).fill('ok'));
        expect(new Set(before.map((s) => s.describe?.transport))).toEqual(new Set(['in-process']));
        const governed = before.find((s) => s.service === 'governed-operations');
        expect(governed?.describe?.stores[0]).toMatchObject({ kind: 'memory', ready: true });
        const namespaces = Object.fromEntries(before.map((s) => [s.service, s.describe?.stores.find((st) => st.kind === 'postgres')?.namespace]));
        expect(Object.values(namespaces).filter(Boolean)).toHaveLength(5);
        first.child.kill('SIGINT');
        const stopped = await (0, testing_1.waitForExit)(first.child, 30_000);
        expect(stopped.code).toBe(0);
        const second = await (0, plane_process_1.startPlane)(env);
        const after = await (0, plane_process_1.listServices)(second.base, tokenFile);
        expect(Object.fromEntries(after.map((s) => [s.service, s.describe?.stores.find((st) => st.kind === 'postgres')?.namespace]))).toEqual(namespaces);
        second.child.kill('SIGTERM');
        expect((await (0, testing_1.waitForExit)(second.child, 30_000)).code).toBe(0);
    }, 180_000);
    it('uses the real NATS, PostgreSQL and Redis when their URLs are set', async () => {
        const prefix = (0, testing_1.uniquePrefix)();
        try {
            const plane = await (0, plane_process_1.startPlane)({
                APPHOST_HOME: home,
                NATS_URL: testing_1.TEST_NATS_URL,
                DATABASE_URL: testing_1.TEST_DATABASE_URL,
                REDIS_URL: testing_1.TEST_REDIS_URL,
                DATABASE_SCHEMA_PREFIX: prefix,
                BUS_SUBJECT_PREFIX: testing_1.TEST_BUS_PREFIX,
            });
            const services = await (0, plane_process_1.listServices)(plane.base, node_path_1.default.join(home, 'dev-token'));
            expect(services.map((s) => s.status)).toEqual(Array(7).fill('ok'));
            expect(new Set(services.map((s) => s.describe?.transport))).toEqual(new Set(['nats']));
            expect(services.find((s) => s.service === 'governed-operations')?.describe?.stores[0]).toMatchObject({ kind: 'redis', ready: true });
            expect(node_fs_1.default.existsSync(node_path_1.default.join(home, 'pg'))).toBe(false);
            // A session deleted through the gateway cascades to the sealed-result store, export-audit and binding-registry over the bus.
            const token = node_fs_1.default.readFileSync(node_path_1.default.join(home, 'dev-token'), 'utf8').trim();
            const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
            const created = await fetch(`${plane.base}/v1/sessions`, { method: 'POST', headers: auth, body: JSON.stringify({ appName: 'demo' }) });
            expect(created.status).toBe(201);
            const session = (await created.json());
            const deleted = await fetch(`${plane.base}/v1/sessions/${session.sessionId}?appName=demo`, { method: 'DELETE', headers: auth });
            expect(deleted.status).toBe(200);
            expect(await deleted.json()).toMatchObject({ state: 'DELETED' });
            const transport = await (0, testing_1.connectTestTransport)('plane-test');
            try {
                const view = await new bus_1.BusClient({ transport, defaultTimeoutMs: 5000 }).request(contracts_1.LifecycleGetSession, {
                    session: { tenant: 'dev', appName: 'demo', userId: session.userId, sessionId: session.sessionId },
                });
                expect(view.cascade?.participants).toEqual([
                    expect.objectContaining({ name: 'governed-operations', revoked: true, purged: true }),
                    expect.objectContaining({ name: 'sealed-result-store', revoked: true, purged: true }),
                    expect.objectContaining({ name: 'export-audit', revoked: true, purged: true }),
                    expect.objectContaining({ name: 'binding-registry', revoked: true, purged: true }),
                ]);
            }
            finally {
                await transport.close();
            }
            plane.child.kill('SIGTERM');
            expect((await (0, testing_1.waitForExit)(plane.child, 30_000)).code).toBe(0);
        }
        finally {
            await (0, testing_1.dropSchemasWithPrefix)(prefix);
        }
    }, 120_000);
    it('runs two planes on one NATS server without either answering the other', async () => {
        const planes = ['a', 'b'].map((name) => ({ name, prefix: (0, testing_1.uniquePrefix)(), home: node_fs_1.default.mkdtempSync(node_path_1.default.join(node_os_1.default.tmpdir(), `apphost-plane-${name}-`)) }));
        const started = [];
        try {
            for (const p of planes) {
                node_fs_1.default.chmodSync(p.home, 0o755);
                const env = {
                    APPHOST_HOME: p.home,
                    NATS_URL: testing_1.TEST_NATS_URL,
                    DATABASE_URL: testing_1.TEST_DATABASE_URL,
                    REDIS_URL: testing_1.TEST_REDIS_URL,
                    DATABASE_SCHEMA_PREFIX: p.prefix,
                };
                started.push(await (0, plane_process_1.startPlane)({ ...env, BUS_SUBJECT_PREFIX: `${testing_1.TEST_BUS_PREFIX}-${p.name}` }));
            }
            // Same service names, same queue groups, one server: without namespaces half of these would be the other plane's.
            const instanceOf = async (i) => {
                const services = await (0, plane_process_1.listServices)(started[i].base, node_path_1.default.join(planes[i].home, 'dev-token'));
                expect(services.map((s) => s.status)).toEqual(Array(7).fill('ok'));
                return new Set(services.map((s) => s.describe?.instanceId));
            };
            const seen = [new Set(), new Set()];
            for (let round = 0; round < 6; round++)
                for (const i of [0, 1])
                    for (const id of await instanceOf(i))
                        seen[i].add(id);
            expect(seen[0].size).toBe(1);
            expect(seen[1].size).toBe(1);
            expect([...seen[0]][0]).not.toBe([...seen[1]][0]);
        }
        finally {
            for (const plane of started) {
                plane.child.kill('SIGTERM');
                await (0, testing_1.waitForExit)(plane.child, 30_000);
            }
            for (const p of planes) {
                await (0, testing_1.dropSchemasWithPrefix)(p.prefix);
                node_fs_1.default.rmSync(p.home, { recursive: true, force: true });
            }
        }
    }, 150_000);
    it('exports its spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
        const received = [];
        const collector = node_http_1.default.createServer((req, res) => {
            const chunks = [];
            req.on('data', (c) => chunks.push(c));
            req.on('end', () => {
                received.push({ url: req.url, body: Buffer.concat(chunks) });
                res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
            });
        });
        await new Promise((resolve) => collector.listen(0, '127.0.0.1', resolve));
        try {
            const endpoint = `http://127.0.0.1:${collector.address().port}`;
            const plane = await (0, plane_process_1.startPlane)({ APPHOST_HOME: home, NATS_URL: '', DATABASE_URL: '', REDIS_URL: '', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
            expect((await (0, plane_process_1.listServices)(plane.base, node_path_1.default.join(home, 'dev-token'))).map((s) => s.status)).toEqual(Array(7).fill('ok'));
            plane.child.kill('SIGTERM'); // the batch processor flushes on shutdown
            expect((await (0, testing_1.waitForExit)(plane.child, 30_000)).code).toBe(0);
            const traces = received.filter((r) => r.url === '/v1/traces');
            expect(traces.length).toBeGreaterThan(0);
            const all = Buffer.concat(traces.map((t) => t.body)).toString('latin1');
            expect(all).toContain('apphost-plane');
            expect(all).toContain('HTTP GET /v1/services');
            expect(all).toContain('bus handle apphost.lifecycle-store.describe.v1');
        }
        finally {
            await new Promise((resolve) => collector.close(resolve));
        }
    }, 120_000);
    it('refuses bad configuration with a clear message and exit code 2', async () => {
        const child = (0, testing_1.spawnTs)(plane_process_1.ENTRY, { APPHOST_HOME: home, APPHOST_PORT: 'eighty' });
        const result = await (0, testing_1.waitForExit)(child, 30_000);
        expect(result.code).toBe(2);
        expect(result.stderr).toContain('APPHOST_PORT');
    });
});
//# sourceMappingURL=plane.spec.js.map