import { AppHostError, type StoreReport } from '@apphost/contracts';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { advisoryLockKey, withAdvisoryLock } from './advisory-lock';
import { parseOpenOptions, type OpenServiceDatabaseOptions, type PersistenceLogger } from './options';
import { QueryPool, type Database } from './query-api';
import { redactText, redactUrl, secretsOf } from '@apphost/redact';
import { storeIdentityMigration } from './store-identity.migration';
import { typeormLogger } from './typeorm-logger';

/** What the store says about itself: created once, never changed. */
export interface StoreIdentity {
  namespace: string;
  service: string;
  createdAt: string;
}

/**
 * A service's open store. Queries go through `query` / `transaction` (see `Database`); `dataSource` is the TypeORM
 * DataSource that ran the migrations, for entities if a service declares any.
 */
export interface ServiceDatabase extends Database {
  dataSource: DataSource;
  schema: string;
  identity: StoreIdentity;
  /** Connections the query pool may open (the `poolSize` option, or pg's default of 10). */
  poolSize: number;
  /**
   * A connection of its own, outside the pool, with the pool's settings (for LISTEN); the caller connects and ends
   * it. It already has an `error` listener (which logs), so a drop never ends the process; `purpose` is appended
   * to its `application_name`.
   */
  dedicatedConnection(purpose: string): Client;
  /** The store's `describe` entry: readiness, identity and applied migrations in order. */
  report(): Promise<StoreReport>;
  /** True when the server answers and still holds this store's identity row (not a swapped or wiped store). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

const MIGRATIONS_TABLE = 'migrations';
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_LOCK_TIMEOUT_MS = 120_000;
/** Well under the 2 s readiness-probe timeout of the manifests: a hung server answers not-ready, in time. */
export const DEFAULT_PING_TIMEOUT_MS = 1_000;

/**
 * Opens a service's PostgreSQL store: its own schema, migrations run at startup under an advisory lock (so
 * replicas booting together migrate once), and the persisted identity checked against `serviceName`.
 */
export async function openServiceDatabase(input: OpenServiceDatabaseOptions): Promise<ServiceDatabase> {
  const options = parseOpenOptions(input);
  const { url, schema, serviceName, logger } = options;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const secrets = secretsOf(url);
  let phase = 'connecting';
  const fail = (error: unknown): AppHostError => {
    if (error instanceof AppHostError) return error;
    const reason = error instanceof Error ? error.message : String(error);
    const pgCode = (error as { code?: unknown } | null)?.code;
    const message = `PostgreSQL store of ${serviceName} (schema ${schema} at ${redactUrl(url)}) unavailable while ${phase}: ${reason}`;
    return new AppHostError('UNAVAILABLE', redactText(message, secrets), {
      details: { phase, schema, ...(typeof pgCode === 'string' ? { pgCode } : {}) },
    });
  };

  // The lock lives on a connection of its own, outside the pool TypeORM migrates through.
  // The schema in every application_name tells this store's backends apart from another's on a shared server.
  const applicationName = `${serviceName}@${schema}`;
  const lockClient = new Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, application_name: `${applicationName}:migrate` });
  lockClient.on('error', () => undefined); // a dropped socket surfaces through the pending query instead
  const pending: { dataSource?: DataSource; queries?: QueryPool } = {}; // what to tear down if opening fails half-way
  try {
    await lockClient.connect();
    phase = 'waiting for the migration lock';
    const key = advisoryLockKey(schema);
    const opened = await withAdvisoryLock(
      lockClient,
      key,
      options.migrationLockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
      async () => {
        phase = 'creating the schema';
        await ensureSchema(lockClient, schema);
        phase = 'checking the store identity';
        // Checked before migrating: a swapped store must not receive this service's tables.
        assertSameService(await readIdentity(lockClient, schema), serviceName, schema);
        phase = 'initialising the pool';
        const ds = new DataSource({
          type: 'postgres',
          url,
          schema,
          applicationName: `${applicationName}:typeorm`,
          poolSize: options.poolSize,
          connectTimeoutMS: connectTimeoutMs,
          entities: options.entities ?? [],
          migrations: [storeIdentityMigration(schema, serviceName), ...options.migrations],
          migrationsTableName: MIGRATIONS_TABLE,
          migrationsTransactionMode: 'each',
          migrationsRun: false,
          synchronize: false,
          // Startup DDL happens only in migrations: no implicit CREATE EXTENSION, and uuid defaults use the
          // built-in gen_random_uuid().
          installExtensions: false,
          uuidExtension: 'pgcrypto',
          // Unqualified names in migrations and raw queries resolve inside the service's schema.
          extra: { options: `-c search_path=${schema}` },
          logger: typeormLogger(logger, { service: serviceName, schema }, secrets),
        });
        pending.dataSource = ds;
        await ds.initialize();
        phase = 'running migrations';
        const ran = await ds.runMigrations({ transaction: 'each' });
        phase = 'reading the store identity';
        const identity = await readIdentity(lockClient, schema);
        if (!identity) throw new AppHostError('FAILED_PRECONDITION', `schema ${schema} has migrations recorded but no store_identity row`);
        assertSameService(identity, serviceName, schema);
        // The pool every query goes through: the same connection settings TypeORM got, owned by this library.
        pending.queries = new QueryPool(
          {
            connectionString: url,
            application_name: applicationName,
            max: options.poolSize,
            connectionTimeoutMillis: connectTimeoutMs,
            options: `-c search_path=${schema}`,
          },
          schema,
          logger,
        );
        return { ds, identity, ran: ran.map((m) => m.name) };
      },
      () => logger?.info({ service: serviceName, schema }, 'another replica holds the migration lock; waiting'),
    );
    const queries = pending.queries as QueryPool;
    phase = 'reading the applied migrations';
    const migrations = await appliedMigrations(queries, schema);
    logger?.info({ service: serviceName, schema, namespace: opened.identity.namespace, applied: opened.ran, migrations }, 'postgres store open');
    return handle(
      opened.ds,
      queries,
      { schema, service: serviceName, pingTimeoutMs: options.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS, logger },
      opened.identity,
      migrations,
    );
  } catch (error) {
    const failure = fail(error);
    logger?.error({ service: serviceName, schema, code: failure.code, details: failure.details }, failure.message);
    await pending.queries?.end().catch(() => undefined);
    if (pending.dataSource?.isInitialized) await pending.dataSource.destroy().catch(() => undefined);
    throw failure;
  } finally {
    await lockClient.end().catch(() => undefined);
  }
}

interface HandleSettings {
  schema: string;
  service: string;
  pingTimeoutMs: number;
  logger?: PersistenceLogger;
}

function handle(dataSource: DataSource, queries: QueryPool, settings: HandleSettings, identity: StoreIdentity, opened: string[]): ServiceDatabase {
  const { schema, service, pingTimeoutMs, logger } = settings;
  let migrations = opened;
  let closed = false;
  /** The identity row, and with `withMigrations` the applied migrations in the same statement; null when it fails. */
  const probe = async (withMigrations: boolean): Promise<{ ready: boolean; migrations?: string[] } | null> => {
    if (closed) return { ready: false };
    try {
      const { rows } = await queries.queryWithin<{ namespace: string; migrations?: string[] }>(
        withMigrations ? reportSql(schema) : pingSql(schema),
        pingTimeoutMs,
      );
      const ready = Array.isArray(rows) && rows.length === 1 && rows[0].namespace === identity.namespace;
      return { ready, migrations: ready ? rows[0].migrations : undefined };
    } catch {
      return null;
    }
  };
  const ping = async (): Promise<boolean> => (await probe(false))?.ready ?? false;
  return {
    dataSource,
    schema,
    identity,
    poolSize: queries.size,
    query: (sql, params) => queries.query(sql, params),
    transaction: (work) => queries.transaction(work),
    dedicatedConnection(purpose) {
      const client = new Client({ ...queries.pool.options, application_name: `${queries.pool.options.application_name}:${purpose}` });
      client.on('error', (error) => logger?.warn({ schema, purpose, err: error.message }, 'dedicated PostgreSQL connection lost'));
      return client;
    },
    ping,
    async report() {
      // One statement within the ping's bound: the identity row and the applied migrations (every batch's store
      // admission asks for this report, so it costs one round trip, not two). A store that fails to answer reports
      // not ready with the last known migrations.
      const probed = await probe(true);
      if (probed?.migrations) migrations = probed.migrations;
      return {
        kind: 'postgres',
        name: service,
        ready: probed?.ready ?? false,
        schema,
        namespace: identity.namespace,
        createdAt: identity.createdAt,
        migrations: [...migrations],
      };
    },
    async close() {
      if (!closed) {
        closed = true;
        await queries.end();
      }
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}

async function ensureSchema(client: Client, schema: string): Promise<void> {
  // Look first: CREATE SCHEMA IF NOT EXISTS still demands CREATE on the database, which a least-privilege
  // role given a pre-made schema lacks.
  const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  if (found.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
}

async function readIdentity(client: Client, schema: string): Promise<StoreIdentity | null> {
  const table = await client.query('SELECT to_regclass($1) IS NOT NULL AS present', [`"${schema}".store_identity`]);
  if (!table.rows[0]?.present) return null;
  const rows = await client.query(`SELECT namespace::text AS namespace, service, created_at FROM "${schema}".store_identity`);
  const row = rows.rows[0] as { namespace: string; service: string; created_at: Date } | undefined;
  return row ? { namespace: row.namespace, service: row.service, createdAt: row.created_at.toISOString() } : null;
}

function assertSameService(identity: StoreIdentity | null, serviceName: string, schema: string): void {
  if (identity && identity.service !== serviceName) {
    throw new AppHostError(
      'FAILED_PRECONDITION',
      `schema ${schema} belongs to service "${identity.service}" (namespace ${identity.namespace}), not "${serviceName}": refusing to serve a swapped store`,
      { details: { schema, expected: serviceName, found: identity.service, namespace: identity.namespace } },
    );
  }
}

const appliedMigrationsSql = (schema: string): string => `SELECT name FROM "${schema}"."${MIGRATIONS_TABLE}" ORDER BY id`;
const pingSql = (schema: string): string => `SELECT namespace::text AS namespace FROM "${schema}".store_identity`;
const reportSql = (schema: string): string =>
  `SELECT namespace::text AS namespace, ARRAY(${appliedMigrationsSql(schema)}) AS migrations FROM "${schema}".store_identity`;

async function appliedMigrations(queries: QueryPool, schema: string): Promise<string[]> {
  const { rows } = await queries.query<{ name: string }>(appliedMigrationsSql(schema));
  return rows.map((r) => r.name);
}
