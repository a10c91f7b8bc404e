import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { RunToolBatchResponse } from '@apphost/contracts';
import { descriptors, eventually, PUBLISHED_SERVERS, REPO_ROOT } from '@apphost/testing';

/**
 * The README walkthrough exactly as written: its first shell block (`npm start` with the walkthrough's settings) and
 * its second (the curl commands) run with bash from the repository root, against a plane on a free port
 * (APPHOST_PORT) with its data in a temporary APPHOST_HOME. Each command of the second block is run in order in one
 * shell; a marker printed after each one splits the output, so every step's reply is checked on its own.
 */
const VANILLA = PUBLISHED_SERVERS.basicVanillaJs;
const MONITOR = PUBLISHED_SERVERS.systemMonitor;

/** The `sh` blocks of the README's walkthrough section, in order. */
function walkthroughBlocks(): string[] {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Walkthrough'));
  if (!section) throw new Error('README.md has no "Walkthrough" section');
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/** A block's commands: comment and blank lines dropped, backslash continuations joined, as bash reads them. */
function commandsOf(block: string): string[] {
  const commands: string[] = [];
  let pending = '';
  for (const line of block.split('\n')) {
    if (!pending && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line}\n`;
      continue;
    }
    commands.push(pending + line);
    pending = '';
  }
  if (pending) throw new Error(`a README command ends in a continuation: ${pending}`);
  return commands;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Steps {
  /** The output of each command, by the command's position. */
  outputs: string[];
  /** The JSON reply of the one command containing every fragment. */
  reply(...fragments: string[]): Record<string, unknown>;
  /** The position of the nth command containing the fragment. */
  at(fragment: string, nth?: number): number;
}

/** Runs commands in order in one bash (`set -euo pipefail`), a marker printed after each one splitting the output. */
function runSteps(commands: string[], env: Record<string, string>, timeoutMs: number): Steps {
  const marker = (i: number) => `@@walkthrough-step-${i}@@`;
  const script = ['set -euo pipefail', ...commands.flatMap((command, i) => [command, `printf '\\n%s\\n' '${marker(i)}'`])].join('\n');
  const run = spawnSync('bash', ['-c', script], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: timeoutMs });
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  const outputs: string[] = [];
  let rest = run.stdout;
  commands.forEach((_, i) => {
    const at = rest.indexOf(`\n${marker(i)}\n`);
    expect(at).toBeGreaterThanOrEqual(0);
    outputs.push(rest.slice(0, at).trim());
    rest = rest.slice(at + marker(i).length + 2);
  });
  return {
    outputs,
    reply: (...fragments) => {
      const hits = commands.flatMap((c, i) => (fragments.every((f) => c.includes(f)) ? [i] : []));
      expect(hits).toHaveLength(1);
      return JSON.parse(outputs[hits[0]]) as Record<string, unknown>;
    },
    at: (fragment, nth = 0) => commands.flatMap((c, i) => (c.includes(fragment) ? [i] : []))[nth],
  };
}

/** Ends the `npm start` process group the way Ctrl-C does (SIGINT to the group), SIGKILL after the grace period. */
async function stopGroup(child: ChildProcess, graceMs: number): Promise<void> {
  const group = child.pid;
  if (group === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(-group, 'SIGINT');
  const timer = setTimeout(() => process.kill(-group, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

describe('README walkthrough on the all-in-one plane', () => {
  const [serverBlock, commandsBlock, viewCallBlock, conversationBlock] = walkthroughBlocks();
  let home: string;
  let env: Record<string, string>;
  let base: string;
  let server: ChildProcess;
  let serverOutput = '';

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-walkthrough-'));
    fs.chmodSync(home, 0o755);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // Nothing of the test environment leaks in (NATS_URL, DATABASE_URL, …): the plane runs on its embedded defaults.
    env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? home, APPHOST_PORT: String(port), APPHOST_HOME: home, LOG_LEVEL: 'warn' };
    server = spawn('bash', ['-c', serverBlock], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout?.on('data', (d: Buffer) => (serverOutput += d.toString()));
    server.stderr?.on('data', (d: Buffer) => (serverOutput += d.toString()));
    await eventually(async () => ((await fetch(`${base}/healthz`)).ok && fs.existsSync(path.join(home, 'dev-token')) ? true : undefined), 90_000, 200).catch(
      async (error: Error) => {
        await stopGroup(server, 5_000);
        throw new Error(`${error.message}\n${serverOutput}`);
      },
    );
  }, 120_000);

  afterAll(async () => {
    if (server) await stopGroup(server, 30_000);
    fs.rmSync(home, { recursive: true, force: true });
  }, 40_000);

  it('has the shell blocks: the server, the commands, the View call and the conversation', () => {
    expect(walkthroughBlocks()).toHaveLength(4);
    expect(serverBlock).toMatch(/^npm start$/m);
    expect(commandsOf(commandsBlock).length).toBeGreaterThanOrEqual(10);
    expect(commandsOf(viewCallBlock).length).toBeGreaterThanOrEqual(8);
    expect(commandsOf(conversationBlock).length).toBeGreaterThanOrEqual(10);
  });

  it('writes the conversation block against the documented routes: two View RPCs, model context, list, claim, consume, the turn', () => {
    expect(spawnSync('bash', ['-n', '-c', conversationBlock], { encoding: 'utf8' })).toMatchObject({ status: 0, stderr: '' });
    const commands = commandsOf(conversationBlock);
    const rpc = commands.filter((c) => c.includes('$B/v1/views/$MVID/rpc'));
    expect(rpc).toHaveLength(2);
    for (const command of rpc) {
      for (const header of ['-H "$H"', '-H "$J"', '-H "Origin: $B"', '-H "X-AppHost-View-Grant: $MG"']) expect(command).toContain(header);
    }
    const bodies = rpc.map((c) => JSON.parse(/-d '([^']*)'/.exec(c)?.[1] ?? 'null') as { method: string; params: Record<string, unknown> });
    expect(bodies.map((b) => b.method)).toEqual(['ui/update-model-context', 'ui/message']);
    expect(bodies[1].params).toMatchObject({ role: 'user', content: [{ type: 'text', text: expect.any(String) }] });
    // The demo profile leaves `callbackPolicy.message` at its default, confirm: only the message carries the attestation.
    const profile = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples/demo-profile.json'), 'utf8')) as { callbackPolicy: Record<string, unknown> };
    expect(profile.callbackPolicy).not.toHaveProperty('message');
    expect(rpc.map((c) => c.includes('-H "X-AppHost-User-Attested: message"'))).toEqual([false, true]);

    const runtimeRoutes = [
      '"$B/v1/sessions/s2/model-context?appName=monitor"',
      '"$B/v1/sessions/s2/messages?appName=monitor&state=ACCEPTED&waitMs=',
      '"$B/v1/sessions/s2/messages/${MID}:claim"',
      '"$B/v1/sessions/s2/messages/${MID}:consume"',
      '$B/v1/sessions/s2/tool-batches',
    ];
    for (const route of runtimeRoutes) {
      const command = commands.find((c) => c.includes(route));
      expect([route, command]).toEqual([route, expect.stringContaining('-H "$H"')]);
      expect(command).not.toContain('Origin');
    }
    // The turn runs as the invocation that consumed the message.
    const consumed = /\\"invocationId\\":\\"([^\\]+)\\"/.exec(commands.find((c) => c.includes(':consume')) ?? '')?.[1];
    const batch = JSON.parse(/-d '([^']*)'/.exec(commands.find((c) => c.includes('/tool-batches')) ?? '')?.[1] ?? 'null') as {
      invocationId: string;
      calls: { tool: string }[];
    };
    expect(consumed).toBe('inv-4');
    expect(batch).toMatchObject({ appName: 'monitor', invocationId: consumed, calls: [{ tool: MONITOR.uiTool }] });
  });

  it('writes the View call block against the documented routes: the monitor toolset, two View RPCs, the events with audience=all', () => {
    expect(spawnSync('bash', ['-n', '-c', viewCallBlock], { encoding: 'utf8' })).toMatchObject({ status: 0, stderr: '' });
    expect(serverBlock).toContain('"monitor":[{"toolsetId":"monitor"}]');
    const toolset = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples/monitor-toolset.json'), 'utf8')) as {
      connection: { command: string };
      profileId: string;
    };
    expect(toolset).toMatchObject({ connection: { command: `node_modules/.bin/${MONITOR.bin}` }, profileId: 'demo' });
    expect(fs.existsSync(path.join(REPO_ROOT, toolset.connection.command))).toBe(true);

    const commands = commandsOf(viewCallBlock);
    const rpc = commands.filter((c) => c.includes('$B/v1/views/$MVID/rpc'));
    expect(rpc).toHaveLength(2);
    for (const command of rpc) {
      for (const header of ['-H "$H"', '-H "$J"', '-H "Origin: $B"', '-H "X-AppHost-View-Grant: $MG"']) expect(command).toContain(header);
    }
    const bodies = rpc.map((c) => JSON.parse(/-d '([^']*)'/.exec(c)?.[1] ?? 'null') as unknown);
    expect(bodies).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: MONITOR.appOnlyTool, arguments: {} } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: VANILLA.uiTool, arguments: {} } },
    ]);
    expect(commands.filter((c) => c.includes('/v1/sessions/s2/events?appName=monitor')).map((c) => c.endsWith('&audience=all"'))).toEqual([false, true]);
  });

  it('profile, toolsets, session, catalog, a UI tool batch, the events, a confirmed call, an export and its audit row, the View', () => {
    const commands = commandsOf(commandsBlock);
    const { outputs, reply, at } = runSteps(commands, env, 90_000);

    // 1. Profile and toolsets.
    expect(reply('PUT', '/v1/profiles/demo')).toMatchObject({ profileId: 'demo', created: true });
    expect(reply('PUT', '/v1/toolsets/vanilla')).toMatchObject({ status: { state: 'PROFILE_BOUND' } });
    expect(reply('PUT', '/v1/toolsets/careful')).toMatchObject({ status: { state: 'PROFILE_BOUND' } });

    // 2. Session and model catalog.
    expect(reply('POST', '$B/v1/sessions -d')).toMatchObject({ sessionId: 's1', appName: 'demo', state: 'ACTIVE' });
    const catalog = reply('/catalog?appName=demo');
    expect((catalog.tools as { name: string; resourceUri: string }[]).map((t) => [t.name, t.resourceUri])).toEqual([
      [VANILLA.uiTool, VANILLA.resourceUri],
      [`careful_${VANILLA.uiTool}`, VANILLA.resourceUri],
    ]);

    // 3. The UI tool batch: projection for the model, a descriptor locating the sealed result.
    const batchCommand = commands.findIndex((c) => c.includes('"invocationId":"inv-1"'));
    const ev = JSON.parse(outputs[batchCommand]) as RunToolBatchResponse;
    expect(ev.functionResponses[0]).toMatchObject({ functionCallId: 'call-1', name: VANILLA.uiTool, response: { content: [{ type: 'text' }] } });
    expect(ev.functionResponses[0].response).not.toHaveProperty('structuredContent');
    expect(descriptors(ev)).toEqual([
      expect.objectContaining({
        resourceUri: VANILLA.resourceUri,
        correlation: { invocationId: 'inv-1', functionCallId: 'call-1' },
        sealedResultRef: expect.any(Object),
      }),
    ]);

    // 4. The events: descriptors, never sealed bytes.
    const eventsCommand = commands.findIndex((c) => c.includes('/events?appName=demo'));
    expect((JSON.parse(outputs[eventsCommand]) as { events: unknown[] }).events).toEqual([expect.objectContaining({ id: ev.eventId, widgets: ev.widgets })]);
    expect(outputs[eventsCommand]).not.toContain('structuredContent');

    // 5. The held call, printed; its confirmation id captured by the README's own command.
    const held = reply('"invocationId":"inv-2"') as unknown as RunToolBatchResponse;
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
    expect(Object.keys(exported.result as object)).not.toContain('structuredContent');
    // 8. Its audit row, redacted.
    expect(reply('/v1/exports?appName=demo')).toMatchObject({
      exports: [{ operationId: 'export-1', functionCallId: 'call-1', projection: 'content', status: 'released', releaseCount: 1 }],
    });

    // 9. The View of call-1: live, the whole get-time document, the full result (structuredContent too), a CSP.
    const summary = reply("node -p 'const v = JSON.parse(fs.readFileSync");
    expect(summary).toMatchObject({ mode: 'live', viewId: expect.stringMatching(/^vw-[0-9a-f]{32}$/), csp: expect.stringMatching(/^default-src 'none'/) });
    expect(summary.htmlBytes).toBeGreaterThan(200_000);
    expect(summary.toolResult).toEqual(expect.arrayContaining(['content']));
    // 10. ACTIVE, never the grant; renewed. 11. Closed (204), then CLOSED.
    const state = JSON.parse(outputs[at('curl -s -H "$H" -H "Origin: $B" $B/v1/views/$VID', 0)]) as Record<string, unknown>;
    expect(state).toMatchObject({ viewId: summary.viewId, mode: 'live', state: 'ACTIVE', reason: null });
    expect(reply(':renew')).toEqual({ viewId: summary.viewId, expiresAt: expect.any(String) });
    expect(outputs[at('-X DELETE')]).toBe('204');
    expect(JSON.parse(outputs[at('curl -s -H "$H" -H "Origin: $B" $B/v1/views/$VID', 1)])).toMatchObject({ viewId: summary.viewId, state: 'CLOSED' });
  }, 120_000);

  // After the commands above (the demo profile): one shell with the commands' variables (their first line), the View
  // call block and the conversation block, as a reader runs them.
  it('the View calls back and talks to the conversation: app-only tool, audit, model context, a message claimed and consumed, the turn', () => {
    const [variables] = commandsOf(commandsBlock);
    expect(variables).toMatch(/^B=.*; H=.*; J=/);
    const commands = [variables, ...commandsOf(viewCallBlock), ...commandsOf(conversationBlock)];
    const { outputs, reply, at } = runSteps(commands, env, 90_000);

    // 13. The app-only tool's CallToolResult. 14. Another server's tool: a JSON-RPC error, nothing ran.
    expect(reply('"id":1,"method":"tools/call"')).toMatchObject({ jsonrpc: '2.0', id: 1, result: { content: expect.any(Array) } });
    expect(reply('"id":2,"method":"tools/call"')).toMatchObject({
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32003, data: { code: 'PERMISSION_DENIED', reason: 'TOOL_NOT_APP_VISIBLE' } },
    });
    // 15. One app audit event per call, left out of the model-facing read.
    const audited = (reply('/v1/sessions/s2/events?appName=monitor&audience=all"').events as { audience: string | null }[]).filter(
      (e) => e.audience === 'app_audit',
    );
    expect(audited).toHaveLength(2);
    const modelEvents = JSON.parse(outputs[at('"$B/v1/sessions/s2/events?appName=monitor"')]) as { events: { audience: string | null }[] };
    expect(modelEvents.events.filter((e) => e.audience === 'app_audit')).toEqual([]);

    // 16. The register committed. 17. The block the model sees: labelled, untrusted, the View's text and state inside.
    expect(reply('"method":"ui/update-model-context"')).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    const context = reply('/model-context?appName=monitor') as {
      block: { role: string; content: { type: string; text: string }[] };
      registers: { viewId: string }[];
      evicted: unknown[];
    };
    const viewId = context.registers[0]?.viewId;
    expect(viewId).toMatch(/^vw-[0-9a-f]{32}$/);
    expect(context.block).toMatchObject({ role: 'user', content: [{ type: 'text' }] });
    expect(context.block.content[0].text).toMatch(/\[MCP App context — widget [0-9]+:call-3, view vw-[0-9a-f]{32}\]/);
    expect(context.block.content[0].text).toContain('The user is watching CPU load.');
    expect(context.block.content[0].text).toContain('{"watching":"cpu"}');
    expect(context.registers).toEqual([{ widgetId: expect.stringMatching(/:call-3$/), viewId, commitSequence: expect.any(Number), bytes: expect.any(Number) }]);
    expect(context.evicted).toEqual([]);

    // 18. The confirmed message, durable before its {}. 19. Listed ACCEPTED, with its exact identity, never a token.
    expect(reply('"method":"ui/message"')).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
    const listed = JSON.parse(outputs[at('/messages?appName=monitor&state=ACCEPTED')]) as { messages: Record<string, unknown>[] };
    expect(listed.messages).toEqual([
      expect.objectContaining({
        messageId: expect.stringMatching(/^msg-[0-9a-f]{32}$/),
        state: 'ACCEPTED',
        role: 'user',
        content: [{ type: 'text', text: 'Why is the CPU this busy?' }],
        viewId,
        widgetId: expect.stringMatching(/:call-3$/),
      }),
    ]);
    expect(listed.messages[0]).not.toHaveProperty('claimToken');
    const messageId = listed.messages[0].messageId;
    // 20. The claim and its token. 21. Consumed by inv-4.
    const claimed = JSON.parse(outputs[at(':claim"')]) as { message: Record<string, unknown>; claimToken: string };
    expect(claimed).toEqual({
      message: expect.objectContaining({ messageId, state: 'CLAIMED' }),
      claimToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      claimExpiresAt: expect.any(String),
    });
    expect(reply(':consume"')).toEqual({ message: expect.objectContaining({ messageId, state: 'CONSUMED', invocationId: 'inv-4' }) });
    expect(outputs[at(':consume"')]).not.toContain(claimed.claimToken);
    // 22. The turn's tool call as inv-4, and its event stamped as an MCP App's.
    expect(reply('"invocationId":"inv-4"')).toMatchObject({ functionResponses: [{ functionCallId: 'call-4', name: MONITOR.uiTool }] });
    expect(JSON.parse(outputs[at('e.invocationId === "inv-4"')])).toEqual([{ id: expect.any(Number), invocationId: 'inv-4', invocationOrigin: 'mcp_app' }]);
  }, 120_000);
});
