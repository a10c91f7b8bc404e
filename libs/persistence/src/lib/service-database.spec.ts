import { AppHostError } from '@apphost/contracts';
import { Client } from 'pg';
import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import {
  AddWidgetColor1700000000002,
  CreateGadgets1700000000003,
  CreateWidgets1700000000001,
  SAMPLE_MIGRATIONS,
  TEST_DATABASE_URL,
  dropSchemas,
  observeRowLock,
  recordingLogger,
  sleep,
  uniqueSchema,
} from '../test-support/pg';
import { advisoryLockKey } from './advisory-lock';
import { openServiceDatabase, type ServiceDatabase } from './service-database';
import { STORE_IDENTITY_MIGRATION } from './store-identity.migration';

@Entity({ name: 'widgets' })
class Widget {
  @PrimaryGeneratedColumn()
  id!: number;
  @Column({ type: 'text' })
  name!: string;
  @Column({ type: 'text' })
  color!: string;
}

const url = TEST_DATABASE_URL;
const created: string[] = [];
const open: ServiceDatabase[] = [];

function schema(): string {
  const name = uniqueSchema();
  created.push(name);
  return name;
}

async function openDb(options: Partial<Parameters<typeof openServiceDatabase>[0]> & { schema: string }): Promise<ServiceDatabase> {
  const db = await openServiceDatabase({ url, serviceName: 'widget-service', migrations: SAMPLE_MIGRATIONS, ...options });
  open.push(db);
  return db;
}

// Not the test kit's expectAppError: @apphost/testing depends on this library (importing it would be a cycle).
async function rejection(promise: Promise<unknown>): Promise<AppHostError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppHostError);
  return error as AppHostError;
}

afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
  await dropSchemas(url, created);
});

describe('openServiceDatabase on a real PostgreSQL', () => {
  it('applies migrations into its own schema, reports them in order and reopens without re-running them', async () => {
    const s = schema();
    const logger = recordingLogger();
    const first = await openDb({ schema: s, entities: [Widget], logger });
    expect(first.identity.service).toBe('widget-service');
    expect(first.identity.namespace).toMatch(/^[0-9a-f-]{36}$/);
    const report = await first.report();
    expect(report).toEqual({
      kind: 'postgres',
      name: 'widget-service',
      ready: true,
      schema: s,
      namespace: first.identity.namespace,
      createdAt: first.identity.createdAt,
      migrations: [STORE_IDENTITY_MIGRATION, 'CreateWidgets1700000000001', 'AddWidgetColor1700000000002'],
    });
    // Entities and the migrations table live in the schema, not in public.
    const saved = await first.dataSource.getRepository(Widget).save({ name: 'sprocket', color: 'red' });
    const tables = await first.dataSource.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`, [s]);
    expect(tables.map((t: { table_name: string }) => t.table_name)).toEqual(['migration_runs', 'migrations', 'store_identity', 'widgets']);
    await first.close();
    expect(await first.ping()).toBe(false);

    const second = await openDb({ schema: s, entities: [Widget], logger, migrations: [...SAMPLE_MIGRATIONS, CreateGadgets1700000000003] });
    expect(second.identity).toEqual(first.identity);
    expect(await second.dataSource.getRepository(Widget).findOneByOrFail({ id: saved.id })).toMatchObject({ name: 'sprocket' });
    const opens = logger.entries.filter((e) => e.msg === 'postgres store open').map((e) => (e.obj as { applied: string[] }).applied);
    expect(opens).toEqual([[STORE_IDENTITY_MIGRATION, 'CreateWidgets1700000000001', 'AddWidgetColor1700000000002'], ['CreateGadgets1700000000003']]);
    expect((await second.report()).migrations?.at(-1)).toBe('CreateGadgets1700000000003');
  });

  it('lets two replicas open the same schema at once and migrates once', async () => {
    const s = schema();
    const logger = recordingLogger();
    const [a, b] = await Promise.all([openDb({ schema: s, logger }), openDb({ schema: s, logger })]);
    expect(a.identity).toEqual(b.identity);
    const runs = await a.dataSource.query('SELECT migration FROM migration_runs ORDER BY migration');
    expect(runs).toEqual([{ migration: 'AddWidgetColor' }, { migration: 'CreateWidgets' }]);
    const recorded = await a.dataSource.query(`SELECT name, count(*)::int AS n FROM "${s}".migrations GROUP BY name`);
    expect(recorded).toHaveLength(3);
    expect(recorded.every((r: { n: number }) => r.n === 1)).toBe(true);
    const applied = logger.entries.filter((e) => e.msg === 'postgres store open').map((e) => (e.obj as { applied: string[] }).applied.length);
    expect(applied.sort()).toEqual([0, 3]);
  });

  it('waits for the advisory lock another session holds before migrating', async () => {
    const s = schema();
    const holder = new Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1::bigint)', [advisoryLockKey(s)]);
      const logger = recordingLogger();
      let opened = false;
      const opening = openDb({ schema: s, logger }).then((db) => ((opened = true), db));
      await sleep(500);
      expect(opened).toBe(false);
      expect(logger.entries.some((e) => /holds the migration lock/.test(e.msg ?? ''))).toBe(true);
      await holder.query('SELECT pg_advisory_unlock($1::bigint)', [advisoryLockKey(s)]);
      expect((await opening).identity.service).toBe('widget-service');
    } finally {
      await holder.end();
    }
  });

  it('refuses a store whose identity names another service, before applying its migrations', async () => {
    const s = schema();
    const a = await openDb({ schema: s, serviceName: 'service-a' });
    await a.close();
    const error = await rejection(openDb({ schema: s, serviceName: 'service-b', migrations: [...SAMPLE_MIGRATIONS, CreateGadgets1700000000003] }));
    expect(error.code).toBe('FAILED_PRECONDITION');
    expect(error.message).toContain('service-a');
    const client = new Client({ connectionString: url });
    await client.connect();
    const gadgets = await client.query('SELECT to_regclass($1) AS t', [`"${s}".gadgets`]);
    await client.end();
    expect(gadgets.rows[0].t).toBeNull();
  });

  it('commits each migration on its own: a failing one leaves the earlier ones applied and fails UNAVAILABLE', async () => {
    const s = schema();
    class Broken1700000000009 extends CreateGadgets1700000000003 {
      override async up(): Promise<void> {
        throw new Error('boom in migration');
      }
    }
    const logger = recordingLogger();
    const error = await rejection(openDb({ schema: s, logger, migrations: [...SAMPLE_MIGRATIONS, Broken1700000000009] }));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('running migrations');
    expect(error.message).toContain('boom in migration');
    // TypeORM's migration output reaches the service logger, not the console.
    expect(logger.entries.some((e) => e.level === 'info' && /Broken1700000000009.*failed/.test(e.msg ?? ''))).toBe(true);
    const db = await openDb({ schema: s });
    expect((await db.report()).migrations).toEqual([STORE_IDENTITY_MIGRATION, 'CreateWidgets1700000000001', 'AddWidgetColor1700000000002']);
  });

  it('stops reporting ready when the identity row no longer matches (a swapped store)', async () => {
    const s = schema();
    const db = await openDb({ schema: s });
    expect(await db.ping()).toBe(true);
    await db.dataSource.query('UPDATE store_identity SET namespace = gen_random_uuid()');
    expect(await db.ping()).toBe(false);
    expect((await db.report()).ready).toBe(false);
  });

  it.each([
    ['an unreachable port', 'postgres://postgres:Sup3rS3cret@127.0.0.1:1/test'],
    ['an unknown host', 'postgres://postgres:Sup3rS3cret@no-such-host.invalid:5432/test'],
    ['a missing database', 'postgres://postgres:Sup3rS3cret@127.0.0.1:5432/no_such_database_x'],
    ['an encoded password', 'postgres://postgres:Sup3r%40S3cret@127.0.0.1:1/test'],
  ])('fails UNAVAILABLE without leaking the password for %s', async (_label, badUrl) => {
    const logger = recordingLogger();
    const error = await rejection(openServiceDatabase({ url: badUrl, schema: schema(), serviceName: 'svc', migrations: [], logger, connectTimeoutMs: 3000 }));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('***');
    for (const text of [error.message, JSON.stringify(error.details), logger.text()]) {
      expect(text).not.toMatch(/Sup3r/);
    }
  });

  it.each(['Bad-Schema', '1starts_with_digit', 'pg_reserved', 'x'.repeat(64), ''])('rejects schema %j with INVALID_ARGUMENT before connecting', async (bad) => {
    // An unreachable URL: any connection attempt would surface as UNAVAILABLE instead.
    const error = await rejection(openServiceDatabase({ url: 'postgres://u:pw@127.0.0.1:1/x', schema: bad, serviceName: 'svc', migrations: [] }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('schema');
  });

  it('rejects a malformed URL and a migration without a timestamp with INVALID_ARGUMENT', async () => {
    const bad = await rejection(openServiceDatabase({ url: 'not a url:pw', schema: 'ok', serviceName: 'svc', migrations: [] }));
    expect(bad.code).toBe('INVALID_ARGUMENT');
    class NoTimestamp extends CreateWidgets1700000000001 {}
    const unnamed = await rejection(openServiceDatabase({ url, schema: 'ok', serviceName: 'svc', migrations: [NoTimestamp, AddWidgetColor1700000000002] }));
    expect(unnamed.code).toBe('INVALID_ARGUMENT');
    expect(unnamed.message).toContain('NoTimestamp');
  });

  it('holds row locks like PostgreSQL: a second FOR UPDATE / guarded UPDATE waits for the first commit', async () => {
    const db = await openDb({ schema: schema() });
    const seen = await observeRowLock(db.dataSource, 400);
    expect(seen.sawLockWait).toBe(true);
    expect(seen.blockedWhileHeld).toBe(true);
    expect(seen.waitedMs).toBeGreaterThanOrEqual(350);
    expect(seen.lockedRead).toBe(1);
    expect(seen.guardedRowCount).toBe(0);
    expect(seen.finalValue).toBe(2);
  });
});
