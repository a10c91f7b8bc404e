import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryConfig } from 'pg';
import type { DataSource } from 'typeorm';

/** One statement's outcome: rows returned (RETURNING / SELECT) and rows affected. */
export interface Rows<T> {
  rows: T[];
  count: number;
}

export type Query = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<Rows<T>>;

/**
 * The repositories' only door to PostgreSQL: single autocommit statements (`one`) and explicit transactions (`tx`).
 * Both run on the `pg` pool of the service's TypeORM DataSource (the pool the persistence library opened, with the
 * service schema on its search_path), without TypeORM's per-query machinery: the hot paths are raw SQL anyway, and
 * the query runner's bookkeeping cost measurable throughput (see README, benchmark). Every statement is a named
 * prepared statement (see `prepared`). Any exception inside `tx` rolls the transaction back.
 */
export class Sql {
  constructor(private readonly dataSource: DataSource) {}

  private get pool(): Pool {
    const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
    if (!pool) throw new Error('lifecycle-store: the PostgreSQL pool is not open');
    return pool;
  }

  async one<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<Rows<T>> {
    const result = await this.pool.query(prepared(sql, params));
    return { rows: result.rows as T[], count: result.rowCount ?? 0 };
  }

  async tx<T>(work: (query: Query) => Promise<T>): Promise<T> {
    const client: PoolClient = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      let result: T;
      try {
        result = await work(async <R>(sql: string, params?: unknown[]) => {
          const r = await client.query(prepared(sql, params ?? []));
          return { rows: r.rows as R[], count: r.rowCount ?? 0 };
        });
      } catch (error) {
        await client.query('ROLLBACK').catch(() => (broken = true));
        throw error;
      }
      await client.query('COMMIT');
      return result;
    } catch (error) {
      broken ||= isConnectionError(error);
      throw error;
    } finally {
      client.release(broken);
    }
  }
}

function isConnectionError(error: unknown): boolean {
  const code = pgCode(error);
  return code === undefined || code.startsWith('08') || code === '57P01';
}

/** PostgreSQL error code of a failed query. */
export function pgCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' ? code : undefined;
}

const names = new Map<string, string>();

/**
 * The statement as a named prepared statement: `pg` parses it once per pooled connection and afterwards sends only
 * Bind/Execute, so PostgreSQL skips parse/analyze (and planning, once it settles on the generic plan) — the hot
 * statements are multi-CTE guarded writes whose planning cost more server CPU than executing them. The name is derived
 * from the text, so one text always maps to one name (`pg` refuses one name for two texts). Needs a session-level
 * connection to PostgreSQL (already required for the search_path, see libs/persistence).
 */
function prepared(text: string, values: unknown[]): QueryConfig {
  let name = names.get(text);
  if (!name) {
    name = `ls_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    names.set(text, name);
  }
  return { name, text, values };
}
