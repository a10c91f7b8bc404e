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
const plane_process_1 = require("./plane-process");
const readme_harness_1 = require("./readme-harness");
/**
 * `npm start` stopped the way a terminal does it: SIGINT to the whole process group. The embedded PostgreSQL runs in
 * its own group, so it outlives the services, stops last, and a restart on the same home answers at once.
 */
jest.setTimeout(150_000);
function startPlaneInGroup(home, port) {
    const env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? home,
        APPHOST_PORT: String(port),
        APPHOST_HOME: home,
        LOG_LEVEL: 'info',
        REGISTRY_ALLOW_STDIO: 'true',
        CATALOG_APP_TOOLSETS: '{"demo":[{"toolsetId":"vanilla"}]}',
    };
    // Detached: the plane leads its own group, as `npm start` leads the terminal's foreground group.
    const child = (0, node_child_process_1.spawn)(process.execPath, ['-r', node_path_1.default.join(testing_1.REPO_ROOT, 'tools', 'register.cjs'), node_path_1.default.join(testing_1.REPO_ROOT, plane_process_1.ENTRY)], {
        cwd: testing_1.REPO_ROOT,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout?.on('data', (d) => (log += d.toString()));
    child.stderr?.on('data', (d) => (log += d.toString()));
    return Object.assign(child, { log: () => log });
}
async function ready(base, child) {
    await (0, testing_1.eventually)(async () => ((await fetch(`${base}/healthz`).catch(() => undefined))?.ok ? true : undefined), 90_000, 200).catch((error) => {
        if (child.pid)
            process.kill(-child.pid, 'SIGKILL');
        throw new Error(`${error.message}\n${child.log()}`);
    });
}
/** Ctrl-C: SIGINT to the group; resolves with the exit code (SIGKILL to the group after the bound). */
async function interruptGroup(child, boundMs) {
    const group = child.pid;
    if (group === undefined)
        throw new Error('the plane has no pid');
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    process.kill(-group, 'SIGINT');
    const timer = setTimeout(() => process.kill(-group, 'SIGKILL'), boundMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
}
function logLines(text) {
    return text.split('\n').flatMap((line) => {
        try {
            return [JSON.parse(line)];
        }
        catch {
            return [];
        }
    });
}
describe('npm start: Ctrl-C stops in order, the database last, and a restart answers at once', () => {
    let home;
    let port;
    const children = [];
    beforeAll(async () => {
        home = node_fs_1.default.mkdtempSync(node_path_1.default.join(node_os_1.default.tmpdir(), 'apphost-clean-stop-'));
        node_fs_1.default.chmodSync(home, 0o755);
        port = await (0, testing_1.freePort)();
    });
    afterAll(async () => {
        for (const child of children)
            if (child.exitCode === null && child.signalCode === null && child.pid)
                process.kill(-child.pid, 'SIGKILL');
        node_fs_1.default.rmSync(home, { recursive: true, force: true });
    });
    it('stops gateway first, the stores after, PostgreSQL last; the next start serves the same session at once', async () => {
        const base = `http://127.0.0.1:${port}`;
        const first = startPlaneInGroup(home, port);
        children.push(first);
        await ready(base, first);
        const flow = new readme_harness_1.ReadmeFlow(base, node_path_1.default.join(home, 'dev-token'));
        await flow.setUp({ vanilla: (0, readme_harness_1.vanillaToolset)() });
        expect((await flow.openSession('s1')).status).toBe(201);
        const call = { functionCallId: 'call-1', tool: testing_1.PUBLISHED_SERVERS.basicVanillaJs.uiTool, arguments: {} };
        expect((await flow.batch('s1', 'inv-1', [call])).status).toBe(200);
        expect(await interruptGroup(first, 60_000)).toBe(0);
        const lines = logLines(first.log());
        const stopped = lines.filter((l) => l.msg === 'service stopped').map((l) => l.service);
        expect(stopped).toEqual(['gateway', 'governed-operations', 'catalog-policy', 'binding-registry', 'export-audit', 'sealed-result-store', 'lifecycle-store']);
        const databaseStopped = lines.findIndex((l) => l.msg === 'embedded postgres stopped');
        const lastServiceStopped = lines.map((l) => l.msg === 'service stopped').lastIndexOf(true);
        expect(databaseStopped).toBeGreaterThan(lastServiceStopped);
        // The group's SIGINT never reached PostgreSQL: no service lost its connections while it was still stopping.
        const raw = first.log().split('\n');
        const lastServiceLine = raw.map((l) => l.includes('"msg":"service stopped"')).lastIndexOf(true);
        const firstTerminated = raw.findIndex((l) => l.includes('terminating connection due to administrator command'));
        expect(firstTerminated === -1 || firstTerminated > lastServiceLine).toBe(true);
        expect(first.log()).not.toContain('did not stop cleanly');
        const second = startPlaneInGroup(home, port);
        children.push(second);
        await ready(base, second);
        // At once: the first batch on the existing session after the restart answers, with no retry.
        const again = await flow.batch('s1', 'inv-2', [{ ...call, functionCallId: 'call-2' }]);
        expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: expect.objectContaining({ eventId: expect.any(Number) }) });
        expect(await interruptGroup(second, 60_000)).toBe(0);
    });
});
//# sourceMappingURL=clean-stop.e2e.spec.js.map