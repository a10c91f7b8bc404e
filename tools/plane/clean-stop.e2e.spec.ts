import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually, freePort, PUBLISHED_SERVERS, REPO_ROOT } from '@apphost/testing';
import { ENTRY } from './plane-process';
import { ReadmeFlow, vanillaToolset } from './readme-harness';

/**
 * `npm start` stopped the way a terminal does it: SIGINT to the whole process group. The embedded PostgreSQL runs in
 * its own group, so it outlives the services, stops last, and a restart on the same home answers at once.
 */
jest.setTimeout(150_000);

interface LogLine {
  msg?: string;
  service?: string;
}

function startPlaneInGroup(home: string, port: number): ChildProcess & { log(): string } {
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
  const child = spawn(process.execPath, ['-r', path.join(REPO_ROOT, 'tools', 'register.cjs'), path.join(REPO_ROOT, ENTRY)], {
    cwd: REPO_ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  return Object.assign(child, { log: () => log });
}

async function ready(base: string, child: ChildProcess & { log(): string }): Promise<void> {
  await eventually(async () => ((await fetch(`${base}/healthz`).catch(() => undefined))?.ok ? true : undefined), 90_000, 200).catch((error: Error) => {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
    throw new Error(`${error.message}\n${child.log()}`);
  });
}

/** Ctrl-C: SIGINT to the group; resolves with the exit code (SIGKILL to the group after the bound). */
async function interruptGroup(child: ChildProcess, boundMs: number): Promise<number | string | null> {
  const group = child.pid;
  if (group === undefined) throw new Error('the plane has no pid');
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  process.kill(-group, 'SIGINT');
  const timer = setTimeout(() => process.kill(-group, 'SIGKILL'), boundMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

function logLines(text: string): LogLine[] {
  return text.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

describe('npm start: Ctrl-C stops in order, the database last, and a restart answers at once', () => {
  let home: string;
  let port: number;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-clean-stop-'));
    fs.chmodSync(home, 0o755);
    port = await freePort();
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('stops gateway first, the stores after, PostgreSQL last; the next start serves the same session at once', async () => {
    const base = `http://127.0.0.1:${port}`;
    const first = startPlaneInGroup(home, port);
    children.push(first);
    await ready(base, first);
    const flow = new ReadmeFlow(base, path.join(home, 'dev-token'));
    await flow.setUp({ vanilla: vanillaToolset() });
    expect((await flow.openSession('s1')).status).toBe(201);
    const call = { functionCallId: 'call-1', tool: PUBLISHED_SERVERS.basicVanillaJs.uiTool, arguments: {} };
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
