"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.FaultPlane = void 0;
const node_fs_1 = __importDefault(require("node:fs"));
const node_os_1 = __importDefault(require("node:os"));
const node_path_1 = __importDefault(require("node:path"));
const bus_1 = require("@apphost/bus");
const testing_1 = require("@apphost/testing");
const readme_harness_1 = require("../plane/readme-harness");
const private_servers_1 = require("./private-servers");
const LAUNCHER = 'tools/plane/start-services.ts';
const STARTED_LINE = /^(\S+) pid (\d+) probe (\S+):(\d+)$/m;
const EXITED_LINE = /^(\S+) pid (\d+) exited \((.+)\)$/;
/**
 * The plane as deployed (`npm run start:services`: seven processes) on a NATS and a Redis of this suite alone and the
 * shared PostgreSQL behind a TCP proxy the suite can cut, pause and resume, in a schema prefix of its own. The
 * launcher restarts a killed service, as Kubernetes restarts a pod.
 */
class FaultPlane {
    constructor(nats, redis, postgres, recordFile, home, schemaPrefix, launcher, flow, transport, bus) {
        this.nats = nats;
        this.redis = redis;
        this.postgres = postgres;
        this.recordFile = recordFile;
        this.home = home;
        this.schemaPrefix = schemaPrefix;
        this.launcher = launcher;
        this.flow = flow;
        this.transport = transport;
        this.bus = bus;
        this.seen = [];
        this.killed = new Set();
        this.killedPids = new Map();
        /** Every session the suite opened: the ledger check walks them all. */
        this.sessions = new Set();
        /** Losses already in an earlier fault's row. */
        this.reportedLosses = new Set();
    }
    get launcherOutput() {
        return this.launcher.output().stdout;
    }
    static async start() {
        const [nats, redis, postgres] = await Promise.all([
            private_servers_1.PrivateServer.nats(),
            private_servers_1.PrivateServer.redis(),
            (0, testing_1.startTcpProxy)('127.0.0.1', Number(new URL(testing_1.TEST_DATABASE_URL).port || 5432)),
        ]);
        const home = node_fs_1.default.mkdtempSync(node_path_1.default.join(node_os_1.default.tmpdir(), 'apphost-faults-'));
        const recordFile = node_path_1.default.join(home, 'executions.log');
        node_fs_1.default.writeFileSync(recordFile, '');
        const schemaPrefix = (0, testing_1.uniquePrefix)();
        const database = new URL(testing_1.TEST_DATABASE_URL);
        database.host = `127.0.0.1:${postgres.port}`;
        const port = await (0, testing_1.freePort)();
        const launcher = (0, testing_1.spawnTs)(LAUNCHER, {
            NATS_URL: nats.url,
            REDIS_URL: redis.url,
            DATABASE_URL: database.toString(),
            DATABASE_SCHEMA_PREFIX: schemaPrefix,
            APPHOST_PORT: String(port),
            APPHOST_HOME: home,
            LOG_LEVEL: 'warn',
            REGISTRY_ALLOW_STDIO: 'true',
            CATALOG_APP_TOOLSETS: JSON.stringify({ demo: [{ toolsetId: 'vanilla' }, { toolsetId: 'recorder' }] }),
            // Records left PENDING by a fault become collectable quickly, so the GC check below has teeth.
            GOVERNED_SEAL_PENDING_TTL_MS: '1000',
            SEALED_GC_INTERVAL_MS: '0',
            SHUTDOWN_GRACE_MS: '2000',
        });
        const output = () => `${launcher.output().stdout}\n${launcher.output().stderr}`;
        await (0, testing_1.eventually)(async () => (launcher.exitCode !== null ? false : /AppHost services are running/.test(launcher.output().stdout)), 120_000, 200).catch((error) => {
            launcher.kill('SIGKILL');
            throw new Error(`${error.message}\n${output()}`);
        });
        const transport = await (0, testing_1.connectTestTransport)('fault-suite', { natsUrl: nats.url });
        const bus = new bus_1.BusClient({ transport, defaultTimeoutMs: 10_000 });
        const flow = new readme_harness_1.ReadmeFlow(`http://127.0.0.1:${port}`, node_path_1.default.join(home, 'dev-token'));
        const plane = new FaultPlane(nats, redis, postgres, recordFile, home, schemaPrefix, launcher, flow, transport, bus);
        await flow.setUp({ vanilla: (0, readme_harness_1.vanillaToolset)(), recorder: recorderToolset(recordFile) });
        return plane;
    }
    /** The current process of each service, from the launcher's lines (the last start of each name wins). */
    services() {
        const current = new Map();
        for (const line of this.launcherOutput.split('\n')) {
            const m = STARTED_LINE.exec(line);
            if (m)
                current.set(m[1], { pid: Number(m[2]), probePort: Number(m[4]) });
        }
        return current;
    }
    /** Services that exited without the suite killing them: a fault must never take down a bystander. */
    unaskedExits() {
        return this.launcherOutput.split('\n').flatMap((line) => {
            const m = EXITED_LINE.exec(line);
            return m && !this.killed.has(m[1]) ? [line] : [];
        });
    }
    launcherAlive() {
        return this.launcher.exitCode === null && this.launcher.signalCode === null;
    }
    /** SIGKILL of one service's current process (see `restarted`). */
    async kill(name) {
        const before = this.services().get(name);
        if (!before)
            throw new Error(`no service ${name}`);
        this.killed.add(name);
        this.killedPids.set(name, before.pid);
        process.kill(before.pid, 'SIGKILL');
    }
    /** Resolves once the launcher has started `name` again after `kill` and its probe answers /healthz. */
    async restarted(name, boundMs = 60_000) {
        const killedPid = this.killedPids.get(name);
        await (0, testing_1.eventually)(async () => {
            const now = this.services().get(name);
            if (!now || now.pid === killedPid)
                return undefined;
            const res = await fetch(`http://127.0.0.1:${now.probePort}/healthz`).catch(() => undefined);
            return res?.ok ? true : undefined;
        }, boundMs, 200);
    }
    /** One call through the suite's client, recorded whatever came back. */
    async call(send) {
        const seen = await send(this.flow).catch((error) => ({ status: 0, error: error.message }));
        this.seen.push(seen);
        return seen;
    }
    executions() {
        const counts = new Map();
        for (const key of node_fs_1.default.readFileSync(this.recordFile, 'utf8').split('\n').filter(Boolean))
            counts.set(key, (counts.get(key) ?? 0) + 1);
        return counts;
    }
    logs() {
        return `${this.launcher.output().stdout}\n${this.launcher.output().stderr}`;
    }
    async stop() {
        await this.transport.close().catch(() => undefined);
        if (this.launcherAlive()) {
            const exited = new Promise((resolve) => this.launcher.once('exit', () => resolve()));
            this.launcher.kill('SIGTERM');
            const timer = setTimeout(() => this.launcher.kill('SIGKILL'), 30_000);
            await exited;
            clearTimeout(timer);
        }
        await Promise.all([this.nats.stop(), this.redis.stop(), this.postgres.close()]);
        await (0, testing_1.dropSchemasWithPrefix)(this.schemaPrefix).catch(() => undefined);
        node_fs_1.default.rmSync(this.home, { recursive: true, force: true });
    }
}
exports.FaultPlane = FaultPlane;
/** The recording fixture as a toolset of the demo profile (stdio, like the README's server). */
function recorderToolset(recordFile) {
    return {
        connection: {
            kind: 'stdio',
            command: process.execPath,
            args: ['-r', node_path_1.default.join(testing_1.REPO_ROOT, 'tools', 'register.cjs'), node_path_1.default.join(testing_1.REPO_ROOT, 'tools', 'faults', 'recording-server.ts'), `--record=${recordFile}`],
            cwd: testing_1.REPO_ROOT,
        },
        profileId: 'demo',
        requireConfirmation: false,
    };
}
//# sourceMappingURL=fault-plane.js.map