import net from 'node:net';
import { Client } from 'pg';
import { SAMPLE_MIGRATIONS, TEST_DATABASE_URL, dropSchemas, sleep, uniqueSchema } from '../test-support/pg';
import { DatabaseConnectionError, QueryPool, connectionFailureOf } from './query-api';
import { openServiceDatabase, type ServiceDatabase } from './service-database';

const url = TEST_DATABASE_URL;
const schemas: string[] = [];
let db: ServiceDatabase;
let admin: Client;

/** Terminates a backend from outside, as an operator or a failover would, and waits until it is gone. */
async function terminate(pid: number): Promise<void> {
  const { rows } = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
  expect(rows[0].ok).toBe(true);
  for (let i = 0; i < 100; i++) {
    const alive = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
    if (alive.rowCount === 0) return;
    await sleep(20);
  }
  throw new Error(`backend ${pid} still alive`);
}

async function failure(promise: Promise<unknown>): Promise<DatabaseConnectionError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DatabaseConnectionError);
  return error as DatabaseConnectionError;
}

const widgets = async (): Promise<string[]> => (await db.query<{ name: string }>('SELECT name FROM widgets ORDER BY id')).rows.map((r) => r.name);
const backend = async (): Promise<number> => (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;

beforeAll(async () => {
  admin = new Client({ connectionString: url });
  await admin.connect();
});

beforeEach(async () => {
  const schema = uniqueSchema();
  schemas.push(schema);
  // One connection: the next operation can only succeed if the pool discarded the dead one and opened another.
  db = await openServiceDatabase({ url, schema, serviceName: 'widget-service', migrations: SAMPLE_MIGRATIONS, poolSize: 1 });
});

afterEach(async () => {
  await db.close();
  await dropSchemas(url, schemas);
});

afterAll(async () => {
  await admin.end();
});

describe('the query API on a real PostgreSQL', () => {
  it('runs statements and transactions in the service schema; work that throws rolls back and its error stands', async () => {
    expect(db.poolSize).toBe(1);
    const inserted = await db.query(`INSERT INTO widgets (name) VALUES ($1), ($2) RETURNING id`, ['a', 'b']);
    expect(inserted.rowCount).toBe(2);
    const committed = await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO widgets (name) VALUES ($1)`, ['c']);
      return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM widgets')).rows[0].n;
    });
    expect(committed).toBe(3);
    class Refused extends Error {}
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO widgets (name) VALUES ($1)`, ['rolled back']);
        throw new Refused('no');
      }),
    ).rejects.toBeInstanceOf(Refused);
    // A statement error is the server's own (SQLSTATE in `code`), not a connection failure, and the connection stays.
    const pid = await backend();
    const violation = await db.query('INSERT INTO widgets (id, name) VALUES (1, $1)', ['dup']).catch((e: unknown) => e);
    expect(violation).not.toBeInstanceOf(DatabaseConnectionError);
    expect((violation as { code?: string }).code).toBe('23505');
    expect(await backend()).toBe(pid);
    expect(await widgets()).toEqual(['a', 'b', 'c']);
  });

  it('a backend terminated between two statements of a transaction fails it typed (UNAVAILABLE), and the next operation succeeds', async () => {
    const before = await backend();
    const error = await failure(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO widgets (name) VALUES ($1)`, ['never committed']);
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // Idle in transaction: the FATAL arrives with no statement to fail, as an 'error' event of the client.
        await terminate(rows[0].pid);
        await sleep(50);
        await tx.query(`INSERT INTO widgets (name) VALUES ($1)`, ['after the kill']);
      }),
    );
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(error.details).toMatchObject({ phase: 'transaction', pgCode: '57P01' });
    expect(await backend()).not.toBe(before); // the dead connection was discarded, a fresh one serves
    expect(await widgets()).toEqual([]);
    expect(await db.transaction(async (tx) => (await tx.query(`INSERT INTO widgets (name) VALUES ('next')`)).rowCount)).toBe(1);
    expect(await widgets()).toEqual(['next']);
  });

  it('a backend terminated while a transaction statement runs, or while work awaits something else, fails typed', async () => {
    const running = await failure(
      db.transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        const slow = tx.query('SELECT pg_sleep(5)');
        await sleep(100);
        await terminate(rows[0].pid);
        await slow;
      }),
    );
    expect(running.code).toBe('UNAVAILABLE');
    expect(running.details).toMatchObject({ phase: 'transaction' });

    // `work` never touches the connection after the kill and returns normally: COMMIT is not sent.
    const idle = await failure(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO widgets (name) VALUES ('lost')`);
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await terminate(rows[0].pid);
        await sleep(50);
        return 'done';
      }),
    );
    expect(idle.code).toBe('UNAVAILABLE');
    expect(await widgets()).toEqual([]);
  });

  it('a single statement whose backend is terminated under it fails OUTCOME_UNKNOWN, and the next statement succeeds', async () => {
    const pid = await backend();
    const slow = db.query('SELECT pg_sleep(5)');
    await sleep(100);
    await terminate(pid);
    const error = await failure(slow);
    expect(error.code).toBe('OUTCOME_UNKNOWN');
    expect(error.details).toMatchObject({ phase: 'statement' });
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    // An idle pooled connection terminated: the pool drops it and the next statement gets a new one.
    const idle = await backend();
    await terminate(idle);
    await sleep(50);
    expect(await backend()).not.toBe(idle);
  });

  it('fails typed (UNAVAILABLE, phase connect) when no connection can be made', async () => {
    const nowhere = new QueryPool({ connectionString: 'postgres://postgres@127.0.0.1:1/test', connectionTimeoutMillis: 2000 }, 'nowhere');
    try {
      for (const attempt of [nowhere.query('SELECT 1'), nowhere.transaction(async (tx) => tx.query('SELECT 1'))]) {
        const error = await failure(attempt);
        expect(error.code).toBe('UNAVAILABLE');
        expect(error.details).toMatchObject({ phase: 'connect', schema: 'nowhere' });
      }
    } finally {
      await nowhere.end();
    }
  });
});

describe('bounded statements (readiness) and the boundary mapping', () => {
  it('readiness probes do not pile error listeners on a pooled connection', async () => {
    const pool = new QueryPool({ connectionString: TEST_DATABASE_URL, max: 1 }, 'probe-listeners');
    try {
      for (let i = 0; i < 25; i++) await pool.queryWithin('SELECT 1', 2_000);
      const client = await pool.pool.connect();
      try {
        expect(client.listenerCount('error')).toBeLessThanOrEqual(2);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it('queryWithin answers from a live server, and fails UNAVAILABLE within its bound on a server that never answers', async () => {
    await expect(db.ping()).resolves.toBe(true);
    // A server that accepts and then says nothing (a hung PostgreSQL); kept local, as this library cannot use the test kit.
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket.on('error', () => undefined)));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    const hung = new QueryPool({ connectionString: `postgres://postgres@127.0.0.1:${port}/test`, connectionTimeoutMillis: 10_000 }, 'hung');
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const started = Date.now();
        const error = await failure(hung.queryWithin('SELECT 1', 200));
        expect(Date.now() - started).toBeLessThan(1_000);
        expect(error).toMatchObject({ code: 'UNAVAILABLE', retryable: true, details: { schema: 'hung', phase: 'connect' } });
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await hung.end().catch(() => undefined);
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('connectionFailureOf types connection-class errors only', () => {
    const serverError = (code: string) => Object.assign(new Error(`server said ${code}`), { severity: 'FATAL', code });
    for (const lost of [
      serverError('57P01'),
      serverError('57P03'),
      serverError('08006'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
    ]) {
      expect(connectionFailureOf(lost)).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    }
    for (const statement of [
      serverError('23505'),
      serverError('40001'),
      Object.assign(new Error('spawn x ENOENT'), { code: 'ENOENT' }),
      new Error('boom'),
      'text',
    ])
      expect(connectionFailureOf(statement)).toBeUndefined();
  });
});
