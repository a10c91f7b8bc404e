import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  dropSchemasWithPrefix,
  eventually,
  freePort,
  PrivateServer,
  REPO_ROOT,
  spawnTs,
  startPrivateNats,
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  uniquePrefix,
  waitForExit,
} from '@apphost/testing';
import { loadServiceDefinitions } from './services';

/** `npm run start:services`: seven processes, a clear refusal without its stores, an ordered stop on Ctrl-C. */
jest.setTimeout(120_000);

const ENTRY = 'tools/plane/start-services.ts';

describe('npm run start:services', () => {
  it('exits 2 naming every missing store URL', async () => {
    const result = await waitForExit(spawnTs(ENTRY, { NATS_URL: '', DATABASE_URL: '', REDIS_URL: '' }), 60_000);
    expect(result.code).toBe(2);
    for (const variable of ['NATS_URL', 'DATABASE_URL', 'REDIS_URL']) expect(result.stderr).toContain(`${variable}: required`);
  });

  it('prints each PID and probe port, and stops the services on Ctrl-C one at a time, gateway first', async () => {
    const nats = await startPrivateNats();
    const redis = await PrivateServer.redis();
    const prefix = uniquePrefix();
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-services-'));
    const port = await freePort();
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NATS_URL: nats.url,
      DATABASE_URL: TEST_DATABASE_URL,
      DATABASE_SCHEMA_PREFIX: prefix,
      REDIS_URL: TEST_REDIS_URL,
    };
    // Detached: the launcher leads its own group, as in a terminal; Ctrl-C signals that whole group.
    const child = spawn(process.execPath, ['-r', path.join(REPO_ROOT, 'tools', 'register.cjs'), path.join(REPO_ROOT, ENTRY)], {
      cwd: REPO_ROOT,
      env: { ...env, APPHOST_PORT: String(port), APPHOST_HOME: home, LOG_LEVEL: 'warn' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const group = child.pid;
    if (group === undefined) throw new Error('the launcher has no pid');
    try {
      await eventually(async () => (child.exitCode === null ? /AppHost services are running/.test(out) : false), 90_000, 200).catch((error: Error) => {
        throw new Error(`${error.message}\n${out}`);
      });
      const names = loadServiceDefinitions().map((d) => d.name);
      for (const name of names) expect(out).toMatch(new RegExp(`^${name} pid \\d+ probe 127\\.0\\.0\\.1:\\d+$`, 'm'));
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      process.kill(-group, 'SIGINT');
      expect(await exited).toBe(0);
      const stopped = [...out.matchAll(/^(\S+) stopped$/gm)].map((m) => m[1]);
      expect(stopped).toEqual([...names].reverse());
      expect(out).not.toMatch(/exited \(/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-group, 'SIGKILL');
      await Promise.all([nats.stop(), redis.stop()]);
      await dropSchemasWithPrefix(prefix);
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
