import { AppHostError } from '@apphost/contracts';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { SAMPLE_MIGRATIONS, observeRowLock, recordingLogger, sleep } from '../test-support/pg';
import { postgresRunAs, resolvePostgresBinaries } from './embedded-binaries';
import { locationFile, reachableBinaries } from './reachable-location';
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

  it('starts from a directory the postgres user cannot enter (a fresh clone in a 0700 dir), and a restart finds the same data', async () => {
    const closed = mkdtempSync(join(tmpdir(), 'apphost-closed-')); // 0700, like `mktemp -d` or a home directory
    const requested = join(closed, '.apphost', 'pg');
    const reachableRoot = join(root, 'reachable');
    const runAs = postgresRunAs();
    const servers: EmbeddedPostgres[] = [];
    const sql = async (pg: EmbeddedPostgres, text: string): Promise<unknown[]> => {
      const client = new Client({ connectionString: pg.url });
      await client.connect();
      try {
        return (await client.query(text)).rows;
      } finally {
        await client.end();
      }
    };
    try {
      const first = await startEmbeddedPostgres({ dataDir: requested, reachableRoot });
      servers.push(first);
      await sql(first, `CREATE TABLE kept (note text); INSERT INTO kept VALUES ('from a closed directory')`);
      await first.stop();
      const second = await startEmbeddedPostgres({ dataDir: requested, reachableRoot });
      servers.push(second);
      expect(second.dataDir).toBe(first.dataDir);
      expect(await sql(second, 'SELECT note FROM kept')).toEqual([{ note: 'from a closed directory' }]);
      if (runAs) {
        // As root: the data lives under the reachable root, owned by the postgres user, and the location file says where.
        expect(first.dataDir.startsWith(`${reachableRoot}/`)).toBe(true);
        expect(statSync(first.dataDir).uid).toBe(runAs.uid);
        expect(JSON.parse(readFileSync(locationFile(requested), 'utf8'))).toMatchObject({ dataDir: first.dataDir, for: requested });
      } else {
        // Not root: the server runs as this user, who owns the directory, so the data stays where it was asked for.
        expect(first.dataDir).toBe(requested);
        expect(existsSync(locationFile(requested))).toBe(false);
      }
    } finally {
      for (const pg of servers) await pg.stop();
      rmSync(closed, { recursive: true, force: true });
    }
  });

  it('runs the server from a copy of its binaries when the installed ones sit in a directory the postgres user cannot enter', () => {
    const closed = mkdtempSync(join(tmpdir(), 'apphost-closed-bin-'));
    const runAs = postgresRunAs();
    try {
      const installed = resolvePostgresBinaries();
      // The package's native tree as a clone in a 0700 directory would hold it.
      const native = join(closed, 'node_modules', 'native');
      cpSync(dirname(dirname(installed.postgres)), native, { recursive: true, verbatimSymlinks: true });
      const hidden = { ...installed, postgres: join(native, 'bin', 'postgres'), initdb: join(native, 'bin', 'initdb') };
      const usable = reachableBinaries(hidden, runAs, join(root, 'reachable'));
      const version = execFileSync(usable.postgres, ['--version'], { cwd: '/', ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) }).toString();
      expect(version).toMatch(/^postgres \(PostgreSQL\) \d+/);
      if (runAs) expect(usable.postgres.startsWith(`${join(root, 'reachable')}/binaries/`)).toBe(true);
      else expect(usable).toEqual(hidden);
    } finally {
      rmSync(closed, { recursive: true, force: true });
    }
  });

  it('refuses to start a second server on a data dir that is in use', async () => {
    const error = await startEmbeddedPostgres({ dataDir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppHostError);
    expect((error as AppHostError).code).toBe('FAILED_PRECONDITION');
  });
});
