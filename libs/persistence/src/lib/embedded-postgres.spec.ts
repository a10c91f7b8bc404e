import { AppHostError } from '@apphost/contracts';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SAMPLE_MIGRATIONS, observeRowLock, recordingLogger, sleep } from '../test-support/pg';
import { postgresRunAs } from './embedded-binaries';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres';
import { openServiceDatabase, type ServiceDatabase } from './service-database';

jest.setTimeout(120_000);

const root = mkdtempSync(join(tmpdir(), 'apphost-pg-'));
chmodSync(root, 0o755); // mkdtemp makes it 0700; when run as root, the postgres user must be able to enter it
const dataDir = join(root, 'pgdata');
const running: EmbeddedPostgres[] = [];
const dbs: ServiceDatabase[] = [];

async function start(): Promise<{ pg: EmbeddedPostgres; ms: number; logger: ReturnType<typeof recordingLogger> }> {
  const began = Date.now();
  const logger = recordingLogger();
  const pg = await startEmbeddedPostgres({ dataDir, logger });
  running.push(pg);
  return { pg, ms: Date.now() - began, logger };
}

async function open(pg: EmbeddedPostgres): Promise<ServiceDatabase> {
  const db = await openServiceDatabase({ url: pg.url, schema: 'widgets', serviceName: 'widget-service', migrations: SAMPLE_MIGRATIONS });
  dbs.push(db);
  return db;
}

/** Every live process whose working directory is the data dir: a postmaster and its backends chdir there. */
function processesOn(dir: string): number[] {
  const target = realpathSync(dir);
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return realpathSync(`/proc/${p}/cwd`) === target;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

afterAll(async () => {
  for (const db of dbs.splice(0)) await db.close().catch(() => undefined);
  for (const pg of running.splice(0)) await pg.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('embedded PostgreSQL', () => {
  let namespace = '';

  it('initialises a data dir, applies migrations and locks rows like the real server', async () => {
    const { pg, ms } = await start();
    console.log(`embedded postgres first start (initdb + boot): ${ms} ms`);
    expect(pg.url).toMatch(/^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/apphost$/);
    expect(pg.port).toBeGreaterThan(0);
    const db = await open(pg);
    namespace = db.identity.namespace;
    expect((await db.report()).migrations).toHaveLength(3);
    await db.dataSource.query(`INSERT INTO widgets (name) VALUES ('kept across restarts')`);

    const seen = await observeRowLock(db.dataSource, 400);
    expect(seen).toMatchObject({ sawLockWait: true, blockedWhileHeld: true, lockedRead: 1, guardedRowCount: 0, finalValue: 2 });
    expect(seen.waitedMs).toBeGreaterThanOrEqual(350);
  });

  it('enforces its generated password without leaking it', async () => {
    const pg = running[0];
    const wrong = pg.url.replace(/:[^:@/]+@/, ':WrongPassw0rd@');
    const error = await openServiceDatabase({ url: wrong, schema: 'widgets', serviceName: 'widget-service', migrations: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppHostError);
    expect((error as AppHostError).code).toBe('UNAVAILABLE');
    expect((error as AppHostError).message).not.toContain('WrongPassw0rd');
  });

  it('stops leaving no process, and restarts on the same data and identity', async () => {
    const first = running.pop() as EmbeddedPostgres;
    await dbs.pop()?.close();
    await first.stop();
    expect(isGone(first.pid)).toBe(true);
    expect(processesOn(dataDir)).toEqual([]);

    const { pg, ms } = await start();
    console.log(`embedded postgres restart: ${ms} ms`);
    const db = await open(pg);
    expect(db.identity.namespace).toBe(namespace);
    expect(await db.dataSource.query('SELECT name FROM widgets')).toEqual([{ name: 'kept across restarts' }]);
  });

  it('starts after a crash left a postmaster.pid whose pid now belongs to another process of the postgres user', async () => {
    const crashed = running.pop() as EmbeddedPostgres;
    await dbs.pop()?.close();
    process.kill(crashed.pid, 'SIGKILL');
    const deadline = Date.now() + 10_000;
    while ((!isGone(crashed.pid) || processesOn(dataDir).length > 0) && Date.now() < deadline) await sleep(50);
    expect(processesOn(dataDir)).toEqual([]);

    // A live process of the same user: PostgreSQL alone would take it for a running postmaster and refuse.
    const runAs = postgresRunAs();
    const impostor = spawn('sleep', ['60'], { stdio: 'ignore', ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) });
    try {
      writeFileSync(join(dataDir, 'postmaster.pid'), `${impostor.pid}\n${dataDir}\n0\n0\n\n127.0.0.1\n  0  0\nready\n`);
      const { pg, ms, logger } = await start();
      console.log(`embedded postgres start after crash (with recovery): ${ms} ms`);
      expect(logger.entries.some((e) => e.msg === 'removing stale postmaster.pid whose pid belongs to another process')).toBe(true);
      const db = await open(pg);
      expect(db.identity.namespace).toBe(namespace);
      expect(await db.dataSource.query('SELECT count(*)::int AS n FROM widgets')).toEqual([{ n: 1 }]);
    } finally {
      impostor.kill('SIGKILL');
    }
  });

  it('explains a data dir the postgres user cannot reach (when run as root)', async () => {
    const hidden = join(root, 'private');
    mkdirSync(hidden, { mode: 0o700 });
    const attempt = startEmbeddedPostgres({ dataDir: join(hidden, 'pgdata') });
    if (postgresRunAs()) {
      const error = await attempt.catch((e: unknown) => e);
      expect((error as AppHostError).code).toBe('FAILED_PRECONDITION');
      expect((error as AppHostError).message).toContain(hidden);
    } else {
      // Not root: the server runs as this user, who owns the directory, so it simply starts.
      const pg = await attempt;
      await pg.stop();
      expect(isGone(pg.pid)).toBe(true);
    }
  });

  it('refuses to start a second server on a data dir that is in use', async () => {
    const error = await startEmbeddedPostgres({ dataDir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppHostError);
    expect((error as AppHostError).code).toBe('FAILED_PRECONDITION');
  });
});
