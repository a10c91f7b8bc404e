// Shared by the specs (never exported from the library): real-server helpers, sample migrations, a row-lock probe.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import type { PersistenceLogger } from '../lib/options';

export const TEST_DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * A stand-in for `ServiceDatabase.dedicatedConnection` on the test database: every client it makes is named
 * `<application>:<purpose>` (so a spec can find and terminate its backends) and ignores its own `error` events.
 */
export function dedicatedConnections(application: string): { dedicatedConnection(purpose: string): Client } {
  return {
    dedicatedConnection: (purpose) => {
      const client = new Client({ connectionString: TEST_DATABASE_URL, application_name: `${application}:${purpose}` });
      client.on('error', () => undefined);
      return client;
    },
  };
}

export function uniqueSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

export async function dropSchemas(url: string, schemas: string[]): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of schemas.splice(0)) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Unqualified names on purpose: they must land in the service's schema through its search_path. */
export class CreateWidgets1700000000001 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE widgets (id serial PRIMARY KEY, name text NOT NULL)');
    // A side effect that shows how many times the migration really ran.
    await q.query('CREATE TABLE migration_runs (migration text NOT NULL)');
    await q.query(`INSERT INTO migration_runs VALUES ('CreateWidgets')`);
    await q.query('SELECT pg_sleep(0.2)'); // widen the window in which an unserialised second replica would collide
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE migration_runs; DROP TABLE widgets');
  }
}

export class AddWidgetColor1700000000002 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE widgets ADD COLUMN color text NOT NULL DEFAULT 'blue'`);
    await q.query(`INSERT INTO migration_runs VALUES ('AddWidgetColor')`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE widgets DROP COLUMN color');
  }
}

export class CreateGadgets1700000000003 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE gadgets (id serial PRIMARY KEY)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE gadgets');
  }
}

export const SAMPLE_MIGRATIONS = [CreateWidgets1700000000001, AddWidgetColor1700000000002];

export interface LogEntry {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg?: string;
}

export function recordingLogger(): PersistenceLogger & { entries: LogEntry[]; text(): string } {
  const entries: LogEntry[] = [];
  return {
    entries,
    info: (obj, msg) => void entries.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void entries.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => void entries.push({ level: 'error', obj, msg }),
    text: () => JSON.stringify(entries),
  };
}

export interface RowLockObservation {
  /** The second transaction's statement was seen waiting on a lock in pg_stat_activity. */
  sawLockWait: boolean;
  /** It had not completed while the first transaction held the row. */
  blockedWhileHeld: boolean;
  waitedMs: number;
  /** What the second transaction saw once it got the row. */
  lockedRead: number;
  /** Rows the second transaction's guarded UPDATE (`... AND v = 1`) changed after the first moved v on. */
  guardedRowCount: number;
  finalValue: number;
}

/**
 * Two pooled connections contend for one row: the first holds it (FOR UPDATE, then UPDATE) for `holdMs`; the
 * second's SELECT ... FOR UPDATE, then its guarded UPDATE, must wait and then see the committed value.
 */
export async function observeRowLock(ds: DataSource, holdMs = 400): Promise<RowLockObservation> {
  await ds.query('CREATE TABLE IF NOT EXISTS lock_probe (id int PRIMARY KEY, v int NOT NULL)');
  await ds.query('INSERT INTO lock_probe VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET v = 0');
  const first = ds.createQueryRunner();
  const second = ds.createQueryRunner();
  try {
    await first.connect();
    await second.connect();
    const [{ pid: secondPid }] = await second.query('SELECT pg_backend_pid() AS pid');
    let sawLockWait = false;
    let blockedWhileHeld = false;
    let waitedMs = 0;

    // Round 1: SELECT ... FOR UPDATE waits, then reads the committed value.
    await first.startTransaction();
    await first.query('SELECT v FROM lock_probe WHERE id = 1 FOR UPDATE');
    await first.query('UPDATE lock_probe SET v = v + 1 WHERE id = 1');
    await second.startTransaction();
    const started = performance.now();
    let done = false;
    const read = second.query('SELECT v FROM lock_probe WHERE id = 1 FOR UPDATE').finally(() => (done = true));
    sawLockWait = await waitForLockWait(ds, secondPid, holdMs);
    await sleep(Math.max(0, holdMs - (performance.now() - started)));
    blockedWhileHeld = !done;
    await first.commitTransaction();
    const [{ v: lockedRead }] = await read;
    waitedMs = performance.now() - started;
    await second.commitTransaction();

    // Round 2: a guarded UPDATE re-checks its guard against the committed row (PostgreSQL's EvalPlanQual).
    await first.startTransaction();
    await first.query('UPDATE lock_probe SET v = v + 1 WHERE id = 1 AND v = 1');
    await second.startTransaction();
    const guarded = second.query('UPDATE lock_probe SET v = v + 1 WHERE id = 1 AND v = 1', [], true);
    const sawSecondWait = await waitForLockWait(ds, secondPid, holdMs);
    await first.commitTransaction();
    const guardedRowCount = (await guarded).affected ?? -1;
    await second.commitTransaction();
    const [{ v: finalValue }] = await ds.query('SELECT v FROM lock_probe WHERE id = 1');
    return { sawLockWait: sawLockWait && sawSecondWait, blockedWhileHeld, waitedMs, lockedRead, guardedRowCount, finalValue };
  } finally {
    await first.release();
    await second.release();
  }
}

async function waitForLockWait(ds: DataSource, pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + Math.max(timeoutMs, 2000);
  while (Date.now() < deadline) {
    const rows = await ds.query('SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [pid]);
    if (rows[0]?.wait_event_type === 'Lock') return true;
    await sleep(20);
  }
  return false;
}

// @apphost/testing depends on this library, so it cannot use the test kit's `sleep` (a dependency cycle).
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
