"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
const node_child_process_1 = require("node:child_process");
const node_fs_1 = __importDefault(require("node:fs"));
const node_net_1 = __importDefault(require("node:net"));
const node_os_1 = __importDefault(require("node:os"));
const node_path_1 = __importDefault(require("node:path"));
const testing_1 = require("@apphost/testing");
/**
 * The README walkthrough exactly as written: its first shell block (`npm start` with the walkthrough's settings) and
 * its second (the curl commands) run with bash from the repository root, against a plane on a free port
 * (APPHOST_PORT) with its data in a temporary APPHOST_HOME. Each command of the second block is run in order in one
 * shell; a marker printed after each one splits the output, so every step's reply is checked on its own.
 */
const VANILLA = testing_1.PUBLISHED_SERVERS.basicVanillaJs;
/** The `sh` blocks of the README's walkthrough section, in order. */
function walkthroughBlocks() {
    const readme = node_fs_1.default.readFileSync(node_path_1.default.join(testing_1.REPO_ROOT, 'README.md'), 'utf8');
    const section = readme.split(/^## /m).find((s) => s.startsWith('Walkthrough'));
    if (!section)
        throw new Error('README.md has no "Walkthrough" section');
    return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}
/** A block's commands: comment and blank lines dropped, backslash continuations joined, as bash reads them. */
function commandsOf(block) {
    const commands = [];
    let pending = '';
    for (const line of block.split('\n')) {
        if (!pending && (line.trim() === '' || line.trimStart().startsWith('#')))
            continue;
        if (line.endsWith('\\')) {
            pending += `${line}\n`;
            continue;
        }
        commands.push(pending + line);
        pending = '';
    }
    if (pending)
        throw new Error(`a README command ends in a continuation: ${pending}`);
    return commands;
}
async function freePort() {
    const server = node_net_1.default.createServer();
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = server.address().port;
    await new Promise((resolve) => server.close(resolve));
    return port;
}
/** Ends the `npm start` process group the way Ctrl-C does (SIGINT to the group), SIGKILL after the grace period. */
async function stopGroup(child, graceMs) {
    const group = child.pid;
    if (group === undefined || child.exitCode !== null || child.signalCode !== null)
        return;
    const exited = new Promise((resolve) => child.once('exit', () => resolve()));
    process.kill(-group, 'SIGINT');
    const timer = setTimeout(() => process.kill(-group, 'SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
}
describe('README walkthrough on the all-in-one plane', () => {
    const [serverBlock, commandsBlock] = walkthroughBlocks();
    let home;
    let env;
    let base;
    let server;
    let serverOutput = '';
    beforeAll(async () => {
        home = node_fs_1.default.mkdtempSync(node_path_1.default.join(node_os_1.default.tmpdir(), 'apphost-walkthrough-'));
        node_fs_1.default.chmodSync(home, 0o755);
        const port = await freePort();
        base = `http://127.0.0.1:${port}`;
        // Nothing of the test environment leaks in (NATS_URL, DATABASE_URL, …): the plane runs on its embedded defaults.
        env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? home, APPHOST_PORT: String(port), APPHOST_HOME: home, LOG_LEVEL: 'warn' };
        server = (0, node_child_process_1.spawn)('bash', ['-c', serverBlock], { cwd: testing_1.REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        server.stdout?.on('data', (d) => (serverOutput += d.toString()));
        server.stderr?.on('data', (d) => (serverOutput += d.toString()));
        await (0, testing_1.eventually)(async () => ((await fetch(`${base}/healthz`)).ok && node_fs_1.default.existsSync(node_path_1.default.join(home, 'dev-token')) ? true : undefined), 90_000, 200).catch(async (error) => {
            await stopGroup(server, 5_000);
            throw new Error(`${error.message}\n${serverOutput}`);
        });
    }, 120_000);
    afterAll(async () => {
        if (server)
            await stopGroup(server, 30_000);
        node_fs_1.default.rmSync(home, { recursive: true, force: true });
    }, 40_000);
    it('has the two shell blocks: the server and the commands', () => {
        expect(serverBlock).toMatch(/^npm start$/m);
        expect(commandsOf(commandsBlock).length).toBeGreaterThanOrEqual(10);
    });
    it('profile, toolsets, session, catalog, a UI tool batch, the events, a confirmed call, an export and its audit row', () => {
        const commands = commandsOf(commandsBlock);
        const marker = (i) => `@@walkthrough-step-${i}@@`;
        const script = ['set -euo pipefail', ...commands.flatMap((command, i) => [command, `printf '\\n%s\\n' '${marker(i)}'`])].join('\n');
        const run = (0, node_child_process_1.spawnSync)('bash', ['-c', script], { cwd: testing_1.REPO_ROOT, env, encoding: 'utf8', timeout: 90_000 });
        expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
        // The output of each command, by the command's position.
        const outputs = [];
        let rest = run.stdout;
        commands.forEach((_, i) => {
            const at = rest.indexOf(`\n${marker(i)}\n`);
            expect(at).toBeGreaterThanOrEqual(0);
            outputs.push(rest.slice(0, at).trim());
            rest = rest.slice(at + marker(i).length + 2);
        });
        /** The JSON reply of the one command containing every fragment. */
        const reply = (...fragments) => {
            const hits = commands.flatMap((c, i) => (fragments.every((f) => c.includes(f)) ? [i] : []));
            expect(hits).toHaveLength(1);
            return JSON.parse(outputs[hits[0]]);
        };
        // 1. Profile and toolsets.
        expect(reply('PUT', '/v1/profiles/demo')).toMatchObject({ profileId: 'demo', created: true });
        expect(reply('PUT', '/v1/toolsets/vanilla')).toMatchObject({ status: { state: 'PROFILE_BOUND' } });
        expect(reply('PUT', '/v1/toolsets/careful')).toMatchObject({ status: { state: 'PROFILE_BOUND' } });
        // 2. Session and model catalog.
        expect(reply('POST', '$B/v1/sessions -d')).toMatchObject({ sessionId: 's1', appName: 'demo', state: 'ACTIVE' });
        const catalog = reply('/catalog?appName=demo');
        expect(catalog.tools.map((t) => [t.name, t.resourceUri])).toEqual([
            [VANILLA.uiTool, VANILLA.resourceUri],
            [`careful_${VANILLA.uiTool}`, VANILLA.resourceUri],
        ]);
        // 3. The UI tool batch: projection for the model, a descriptor locating the sealed result.
        const batchCommand = commands.findIndex((c) => c.includes('"invocationId":"inv-1"'));
        const ev = JSON.parse(outputs[batchCommand]);
        expect(ev.functionResponses[0]).toMatchObject({ functionCallId: 'call-1', name: VANILLA.uiTool, response: { content: [{ type: 'text' }] } });
        expect(ev.functionResponses[0].response).not.toHaveProperty('structuredContent');
        expect((0, testing_1.descriptors)(ev)).toEqual([
            expect.objectContaining({
                resourceUri: VANILLA.resourceUri,
                correlation: { invocationId: 'inv-1', functionCallId: 'call-1' },
                sealedResultRef: expect.any(Object),
            }),
        ]);
        // 4. The events: descriptors, never sealed bytes.
        const eventsCommand = commands.findIndex((c) => c.includes('/events?appName=demo'));
        expect(JSON.parse(outputs[eventsCommand]).events).toEqual([expect.objectContaining({ id: ev.eventId, widgets: ev.widgets })]);
        expect(outputs[eventsCommand]).not.toContain('structuredContent');
        // 5. The held call, printed; its confirmation id captured by the README's own command.
        const held = reply('"invocationId":"inv-2"');
        expect(held.functionResponses[0].response).toMatchObject({ error: { code: 'CONFIRMATION_REQUIRED' } });
        expect(held.confirmations).toEqual([expect.objectContaining({ confirmationId: expect.stringMatching(/^cf-[0-9a-f]{32}$/) })]);
        // 6. The decision runs the sealed call once; the new event answers call-2.
        expect(reply('/confirmations/$CID')).toMatchObject({
            functionResponses: [{ functionCallId: 'call-2', response: { content: [{ type: 'text' }] } }],
            widgets: [expect.objectContaining({ resourceUri: VANILLA.resourceUri })],
        });
        // 7. The export of call-1 (the content projection: the profile has no export policy), released and audited.
        const exported = reply('/v1/exports \\');
        expect(exported).toMatchObject({ status: 'released', releaseCount: 1, result: { content: [{ type: 'text' }] } });
        expect(Object.keys(exported.result)).not.toContain('structuredContent');
        // 8. Its audit row, redacted.
        expect(reply('/v1/exports?appName=demo')).toMatchObject({
            exports: [{ operationId: 'export-1', functionCallId: 'call-1', projection: 'content', status: 'released', releaseCount: 1 }],
        });
    }, 120_000);
});
//# sourceMappingURL=walkthrough.e2e.spec.js.map