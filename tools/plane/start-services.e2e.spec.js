"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
const node_child_process_1 = require("node:child_process");
const node_fs_1 = __importDefault(require("node:fs"));
const node_os_1 = __importDefault(require("node:os"));
const node_path_1 = __importDefault(require("node:path"));
const testing_1 = require("@apphost/testing");
const private_servers_1 = require("../faults/private-servers");
const services_1 = require("./services");
/** `npm run start:services`: seven processes, a clear refusal without its stores, an ordered stop on Ctrl-C. */
jest.setTimeout(120_000);
const ENTRY = 'tools/plane/start-services.ts';
describe('npm run start:services', () => {
    it('exits 2 naming every missing store URL', async () => {
        const result = await (0, testing_1.waitForExit)((0, testing_1.spawnTs)(ENTRY, { NATS_URL: '', DATABASE_URL: '', REDIS_URL: '' }), 60_000);
        expect(result.code).toBe(2);
        for (const variable of ['NATS_URL', 'DATABASE_URL', 'REDIS_URL'])
            expect(result.stderr).toContain(`${variable}: required`);
    });
    it('prints each PID and probe port, and stops the services on Ctrl-C one at a time, gateway first', async () => {
        const nats = await (0, testing_1.startPrivateNats)();
        const redis = await private_servers_1.PrivateServer.redis();
        const prefix = (0, testing_1.uniquePrefix)();
        const home = node_fs_1.default.mkdtempSync(node_path_1.default.join(node_os_1.default.tmpdir(), 'apphost-services-'));
        const port = await (0, testing_1.freePort)();
        const env = {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            NATS_URL: nats.url,
            DATABASE_URL: testing_1.TEST_DATABASE_URL,
            DATABASE_SCHEMA_PREFIX: prefix,
            REDIS_URL: testing_1.TEST_REDIS_URL,
        };
        // Detached: the launcher leads its own group, as in a terminal; Ctrl-C signals that whole group.
        const child = (0, node_child_process_1.spawn)(process.execPath, ['-r', node_path_1.default.join(testing_1.REPO_ROOT, 'tools', 'register.cjs'), node_path_1.default.join(testing_1.REPO_ROOT, ENTRY)], {
            cwd: testing_1.REPO_ROOT,
            env: { ...env, APPHOST_PORT: String(port), APPHOST_HOME: home, LOG_LEVEL: 'warn' },
            detached: true,
            stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout?.on('data', (d) => (out += d.toString()));
        child.stderr?.on('data', (d) => (out += d.toString()));
        const group = child.pid;
        if (group === undefined)
            throw new Error('the launcher has no pid');
        try {
            await (0, testing_1.eventually)(async () => (child.exitCode === null ? /AppHost services are running/.test(out) : false), 90_000, 200).catch((error) => {
                throw new Error(`${error.message}\n${out}`);
            });
            const names = (0, services_1.loadServiceDefinitions)().map((d) => d.name);
            for (const name of names)
                expect(out).toMatch(new RegExp(`^${name} pid \\d+ probe 127\\.0\\.0\\.1:\\d+$`, 'm'));
            expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
            const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
            process.kill(-group, 'SIGINT');
            expect(await exited).toBe(0);
            const stopped = [...out.matchAll(/^(\S+) stopped$/gm)].map((m) => m[1]);
            expect(stopped).toEqual([...names].reverse());
            expect(out).not.toMatch(/exited \(/);
        }
        finally {
            if (child.exitCode === null && child.signalCode === null)
                process.kill(-group, 'SIGKILL');
            await Promise.all([nats.stop(), redis.stop()]);
            await (0, testing_1.dropSchemasWithPrefix)(prefix);
            node_fs_1.default.rmSync(home, { recursive: true, force: true });
        }
    });
});
//# sourceMappingURL=start-services.e2e.spec.js.map