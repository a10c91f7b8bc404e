import { Client } from 'pg';
import { TEST_DATABASE_URL } from './environment';

/** One server process of PostgreSQL as `pg_stat_activity` shows it. */
export interface Backend {
  pid: number;
  /** `active`, `idle`, `idle in transaction`, ... */
  state: string | null;
  /** Blocked on a lock right now. */
  waitingOnLock: boolean;
  query: string;
}

/** The `application_name` the persistence library gives a store's connections: `<service>@<schema>[:<purpose>]`. */
export function storeApplicationName(service: string, schema: string, purpose?: string): string {
  // PostgreSQL keeps 63 bytes of it; the names here are ASCII.
  return `${service}@${schema}${purpose ? `:${purpose}` : ''}`.slice(0, 63);
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, application_name: 'apphost-test-faults' });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The backends of one store (by its application name): only the test's own, never another suite's. */
export function backendsOf(applicationName: string, url = TEST_DATABASE_URL): Promise<Backend[]> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ pid: number; state: string | null; waiting: boolean; query: string }>(
      `SELECT pid, state, wait_event_type = 'Lock' AS waiting, query FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`,
      [applicationName],
    );
    return rows.map((r) => ({ pid: r.pid, state: r.state, waitingOnLock: r.waiting === true, query: r.query }));
  });
}

/** `pg_terminate_backend` on exactly these pids (57P01, what a restart or failover sends); resolves once they are gone. */
export function terminateBackends(pids: readonly number[], url = TEST_DATABASE_URL): Promise<void> {
  return withClient(url, async (client) => {
    await client.query('SELECT pg_terminate_backend(pid, 5000) FROM unnest($1::int[]) AS pid', [[...pids]]);
  });
}

/** A table held in EXCLUSIVE mode by a transaction of the test's own: writers to it block until `release()`. */
export interface TableLock {
  release(): Promise<void>;
}

export async function lockTable(schema: string, table: string, url = TEST_DATABASE_URL): Promise<TableLock> {
  const client = new Client({ connectionString: url, application_name: 'apphost-test-lock' });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE "${schema}"."${table}" IN EXCLUSIVE MODE`);
  return {
    async release() {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    },
  };
}
