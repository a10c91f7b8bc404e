"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.parseServicesConfig = parseServicesConfig;
exports.startServiceProcesses = startServiceProcesses;
const node_child_process_1 = require("node:child_process");
const node_net_1 = __importDefault(require("node:net"));
const node_path_1 = __importDefault(require("node:path"));
const zod_1 = require("zod");
const runtime_1 = require("@apphost/runtime");
const services_1 = require("./services");
const REPO_ROOT = node_path_1.default.join(__dirname, '..', '..');
const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 20_000;
/** A service that exits on its own is restarted (as a pod would be), at most this often. */
const RESTART_DELAY_MS = 500;
/** Exit code of a standalone service on bad configuration: restarting cannot help. */
const CONFIG_EXIT_CODE = 2;
/** `npm run start:services`: every service as its own process on the stores the environment names. */
const servicesConfigSchema = zod_1.z.object({
    NATS_URL: zod_1.z.string({ error: 'required: the NATS every service connects to' }).min(1),
    DATABASE_URL: zod_1.z.string({ error: 'required: the PostgreSQL the stores use' }).min(1),
    REDIS_URL: zod_1.z.string({ error: 'required: the Redis the coordination store uses' }).min(1),
    APPHOST_HOST: zod_1.z.string().min(1).default('127.0.0.1'),
    APPHOST_PORT: zod_1.z.coerce.number().int().min(0).max(65535).default(8080),
    APPHOST_HOME: zod_1.z.string().min(1).default('.apphost'),
});
function parseServicesConfig(env) {
    return (0, runtime_1.parseConfig)('apphost services', servicesConfigSchema, env);
}
/**
 * Starts the seven services (apps/<name>/src/main.ts) in their own process group each, so a terminal's Ctrl-C
 * reaches only this launcher and the stop keeps its order. The stores come up first, the gateway last.
 */
async function startServiceProcesses(config, env, report) {
    const home = node_path_1.default.resolve(config.APPHOST_HOME);
    const common = {
        ...env,
        NATS_URL: config.NATS_URL,
        DATABASE_URL: config.DATABASE_URL,
        REDIS_URL: config.REDIS_URL,
        HTTP_HOST: config.APPHOST_HOST,
        AUTH_MODE: env.AUTH_MODE ?? 'development',
        AUTH_DEV_TOKEN_FILE: env.AUTH_DEV_TOKEN_FILE ?? node_path_1.default.join(home, 'dev-token'),
        LIFECYCLE_CASCADE_PARTICIPANTS: env.LIFECYCLE_CASCADE_PARTICIPANTS ?? 'governed-operations,sealed-result-store,export-audit',
    };
    const supervised = [];
    let stopping = false;
    const definitions = (0, services_1.loadServiceDefinitions)();
    const launch = async (name, probePort) => {
        const service = new Supervised(name, probePort, { ...common, HTTP_PORT: String(probePort) }, report, () => stopping);
        supervised.push(service);
        service.start();
        await service.ready();
    };
    // Children have their own process groups: if this launcher dies unasked, they must not outlive it.
    process.once('exit', () => supervised.forEach((s) => s.kill()));
    const stop = async (force = false) => {
        stopping = true;
        for (const service of [...supervised].reverse())
            await service.stop(force);
    };
    try {
        const stores = definitions.filter((d) => d.name !== 'gateway');
        await Promise.all(stores.map(async (d) => launch(d.name, await freePort(config.APPHOST_HOST))));
        await launch('gateway', config.APPHOST_PORT);
    }
    catch (error) {
        await stop(true);
        throw error;
    }
    return { processes: () => supervised.map((s) => ({ name: s.name, pid: s.pid, probePort: s.probePort })), stop };
}
/** One service process, restarted when it exits unasked (unless its configuration is bad). */
class Supervised {
    constructor(name, probePort, env, report, stopping) {
        this.name = name;
        this.probePort = probePort;
        this.env = env;
        this.report = report;
        this.stopping = stopping;
        this.exited = Promise.resolve();
        this.pid = -1;
    }
    start() {
        const entry = node_path_1.default.join(REPO_ROOT, 'apps', this.name, 'src', 'main.ts');
        const child = (0, node_child_process_1.spawn)(process.execPath, ['-r', node_path_1.default.join(REPO_ROOT, 'tools', 'register.cjs'), entry], {
            cwd: REPO_ROOT,
            env: this.env,
            detached: true,
            stdio: ['ignore', 'inherit', 'inherit'],
        });
        this.child = child;
        this.pid = child.pid ?? -1;
        this.report(`${this.name} pid ${this.pid} probe ${this.env.HTTP_HOST}:${this.probePort}`);
        this.exited = new Promise((resolve) => child.once('exit', (code, signal) => {
            resolve();
            if (this.stopping() || this.child !== child)
                return;
            this.report(`${this.name} pid ${child.pid} exited (${signal ?? code})`);
            if (code === CONFIG_EXIT_CODE)
                return;
            setTimeout(() => this.stopping() || this.start(), RESTART_DELAY_MS);
        }));
    }
    /** Resolves once the probe port answers /healthz; fails if the process exits first or the bound passes. */
    async ready() {
        const deadline = Date.now() + READY_TIMEOUT_MS;
        while (Date.now() < deadline) {
            if (this.child?.exitCode !== null)
                throw new Error(`${this.name} exited with ${this.child?.exitCode} before it was ready`);
            const ok = await fetch(`http://${this.env.HTTP_HOST}:${this.probePort}/healthz`).then((r) => r.ok, () => false);
            if (ok)
                return;
            await new Promise((r) => setTimeout(r, 200));
        }
        throw new Error(`${this.name} was not healthy within ${READY_TIMEOUT_MS} ms`);
    }
    kill() {
        if (this.child && this.child.exitCode === null && this.child.signalCode === null)
            this.child.kill('SIGKILL');
    }
    async stop(force) {
        const child = this.child;
        if (!child || child.exitCode !== null || child.signalCode !== null)
            return;
        child.kill(force ? 'SIGKILL' : 'SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await this.exited;
        clearTimeout(timer);
        this.report(`${this.name} stopped`);
    }
}
function freePort(host) {
    return new Promise((resolve, reject) => {
        const probe = node_net_1.default.createServer();
        probe.once('error', reject);
        probe.listen(0, host, () => {
            const port = probe.address().port;
            probe.close(() => resolve(port));
        });
    });
}
//# sourceMappingURL=service-processes.js.map