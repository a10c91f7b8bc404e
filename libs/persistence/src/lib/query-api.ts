import { createHash } from 'node:crypto';
import { AppHostError } from '@apphost/contracts';
import { Pool, type PoolClient, type PoolConfig, type QueryConfig, type QueryResultRow } from 'pg';
import type { PersistenceLogger } from './options';

/** One statement's outcome: the rows it returned (SELECT / RETURNING) and the rows it affected. */
export interface QueryResult<T extends QueryResultRow = QueryResultRow> {
  rows: T[];
  rowCount: number;
}

/** Runs one statement: constant SQL text with `$1..$n` placeholders, values passed separately. */
export interface Queryable {
  query<T extends QueryResultRow = QueryResultRow>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>>;
}

/** The query API of a service's store: single autocommit statements and explicit transactions. */
/** Pooled clients that already carry the probe's lifetime `error` listener. */
const guarded = new WeakSet<PoolClient>();

export interface Database extends Queryable {
  /**
   * BEGIN, `work`, COMMIT on one pooled connection; anything `work` throws rolls the transaction back and is
   * rethrown unchanged.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
}

/**
 * The store's connection failed. `UNAVAILABLE` (retryable): the work certainly did not commit (no connection, or
 * the connection was lost inside a transaction before COMMIT). `OUTCOME_UNKNOWN`: a single statement or a COMMIT
 * was in flight and may have committed. Statement errors (constraint violations, bad input, ...) are not this:
 * they surface as the `pg` error with its SQLSTATE `code`.
 */
export class DatabaseConnectionError extends AppHostError {
  constructor(code: 'UNAVAILABLE' | 'OUTCOME_UNKNOWN', message: string, details: { schema?: string; phase: ConnectionPhase; pgCode?: string }) {
    super(code, message, { details });
    this.name = 'DatabaseConnectionError';
  }
}

type ConnectionPhase = 'connect' | 'statement' | 'transaction' | 'commit';

// Socket-level only: a spawn's ENOENT or a file's EACCES escaping a handler is a bug, not a lost connection.
const SOCKET_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether an error means the connection, not the statement, failed: a server error of SQLSTATE class 08
 * (connection exception) or 57P (operator intervention: terminated backend, shutdown, cannot connect now), a socket
 * error (ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, ...), or `pg`'s own words for a socket that closed under a
 * statement, a client that already broke, or a pool checkout that timed out.
 */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if ('severity' in error) return typeof code === 'string' && (code.startsWith('08') || code.startsWith('57P'));
  if (typeof code === 'string') return SOCKET_FAILURES.has(code);
  return /^Connection terminated|^timeout exceeded when trying to connect|^Client has encountered a connection error/.test(error.message);
}

/**
 * The typed form of a connection failure that reached a boundary without passing through a `QueryPool` (a
 * dedicated client's, say): `UNAVAILABLE`, retryable. Anything else → `undefined`, for the caller's own mapping.
 */
export function connectionFailureOf(error: unknown): DatabaseConnectionError | undefined {
  if (error instanceof DatabaseConnectionError) return error;
  if (!isConnectionFailure(error)) return undefined;
  const pgCode = (error as { code?: unknown }).code;
  return new DatabaseConnectionError('UNAVAILABLE', `a store connection failed (${(error as Error).message}); not executed past it`, {
    phase: 'connect',
    ...(typeof pgCode === 'string' ? { pgCode } : {}),
  });
}

const names = new Map<string, string>();

/**
 * The statement as a named prepared statement: `pg` parses it once per pooled connection and afterwards sends only
 * Bind/Execute, so PostgreSQL skips parse/analyze (and planning, once it settles on the generic plan). The name is
 * derived from the text, so one text always maps to one name (`pg` refuses one name for two texts).
 */
function prepared(text: string, values: readonly unknown[] | undefined): QueryConfig {
  let name = names.get(text);
  if (!name) {
    name = `q_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return { name, text, values: values ? [...values] : [] };
}

const result = <T extends QueryResultRow>(r: { rows: T[]; rowCount: number | null }): QueryResult<T> => ({ rows: r.rows, rowCount: r.rowCount ?? 0 });

/**
 * The one door to a service's PostgreSQL schema: a `pg` pool owned by this library (search_path = the schema), with
 * error listeners on the pool and on every checked-out client, so a backend terminated at any moment fails the
 * operation with a `DatabaseConnectionError` and never surfaces as an unhandled 'error' event.
 */
export class QueryPool implements Database {
  readonly pool: Pool;

  constructor(
    config: PoolConfig,
    private readonly schema: string,
    private readonly logger?: PersistenceLogger,
  ) {
    this.pool = new Pool(config);
    // An idle pooled connection that dies is discarded by the pool, which then emits 'error' here.
    this.pool.on('error', (error) =>
      this.logger?.warn({ schema, err: error.message, pgCode: (error as { code?: unknown }).code }, 'idle PostgreSQL connection lost; discarded'),
    );
  }

  get size(): number {
    return this.pool.options.max;
  }

  /** One autocommit statement on a pooled connection: one round trip once the connection has prepared it. */
  async query<T extends QueryResultRow = QueryResultRow>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
    const client = await this.checkout();
    let lostWith: unknown;
    const onError = (error: unknown): void => {
      lostWith ??= error;
    };
    client.on('error', onError);
    try {
      return result(await client.query<T>(prepared(sql, params)));
    } catch (error) {
      if (lostWith === undefined && isConnectionFailure(error)) lostWith = error;
      throw lostWith !== undefined ? this.lost(lostWith, 'statement') : error;
    } finally {
      this.release(client, onError, lostWith);
    }
  }

  /**
   * One statement that must answer within `timeoutMs` (readiness probes). A server that accepts but never answers
   * would otherwise hold the caller, and the connection, forever: on expiry the call fails `UNAVAILABLE` and the
   * connection is released broken, so the pool destroys it instead of handing it out again.
   */
  queryWithin<T extends QueryResultRow = QueryResultRow>(sql: string, timeoutMs: number): Promise<QueryResult<T>> {
    return new Promise<QueryResult<T>>((resolve, reject) => {
      let settled = false;
      let client: PoolClient | undefined;
      let released = false;
      const releaseOnce = (broken?: Error): void => {
        if (!client || released) return;
        released = true;
        client.release(broken);
      };
      const settle = (outcome: () => void): void => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        outcome();
      };
      const timer = setTimeout(() => {
        const expired = new Error(`no answer within ${timeoutMs} ms`);
        releaseOnce(expired);
        settle(() => reject(this.lost(expired, 'connect')));
      }, timeoutMs);
      this.checkout().then(
        (checkedOut) => {
          client = checkedOut;
          // Stays for the client's lifetime (a client released broken may still emit while its socket closes), so
          // once per client: a probe per readiness check would otherwise pile listeners on pooled clients.
          if (!guarded.has(checkedOut)) {
            guarded.add(checkedOut);
            checkedOut.on('error', () => undefined);
          }
          if (settled) return releaseOnce(); // arrived after the deadline, healthy: back to the pool
          checkedOut.query<T>(prepared(sql, undefined)).then(
            (r) => {
              releaseOnce();
              settle(() => resolve(result(r)));
            },
            (error: unknown) => {
              const broken = isConnectionFailure(error);
              releaseOnce(broken ? (error as Error) : undefined);
              settle(() => reject(broken ? this.lost(error, 'connect') : error));
            },
          );
        },
        (error: unknown) => settle(() => reject(error)),
      );
    });
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.checkout();
    // A checked-out client has no pool listener: without this one, a backend terminated between two statements
    // (its FATAL arrives with no query to fail) would be an unhandled 'error' event and end the process.
    let lostWith: unknown;
    const onError = (error: unknown): void => {
      lostWith ??= error;
    };
    client.on('error', onError);
    let phase: ConnectionPhase = 'transaction';
    const run = async (statement: string | QueryConfig): Promise<QueryResult<QueryResultRow>> => {
      if (lostWith !== undefined) throw this.lost(lostWith, phase);
      try {
        return result(await client.query(statement));
      } catch (error) {
        if (lostWith === undefined && isConnectionFailure(error)) lostWith = error;
        throw lostWith !== undefined ? this.lost(lostWith, phase) : error;
      }
    };
    try {
      await run('BEGIN');
      let value: T;
      try {
        value = await work({ query: ((sql: string, params?: readonly unknown[]) => run(prepared(sql, params))) as Queryable['query'] });
      } catch (error) {
        if (lostWith !== undefined) throw error instanceof DatabaseConnectionError ? error : this.lost(lostWith, phase);
        // A ROLLBACK that fails leaves the connection suspect: it is discarded, and `work`'s own error stands.
        await client.query('ROLLBACK').catch((rollback: unknown) => (lostWith ??= rollback));
        throw error;
      }
      // Lost while `work` awaited something else: COMMIT was never sent, so nothing committed.
      if (lostWith !== undefined) throw this.lost(lostWith, phase);
      phase = 'commit';
      await run('COMMIT');
      return value;
    } finally {
      this.release(client, onError, lostWith);
    }
  }

  private async checkout(): Promise<PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw this.lost(error, 'connect');
    }
  }

  /** A healthy client goes back to the pool; a lost one is released with its error, so the pool destroys it. */
  private release(client: PoolClient, onError: (error: unknown) => void, lostWith: unknown): void {
    if (lostWith === undefined) {
      client.off('error', onError);
      client.release();
    } else {
      // The listener stays: the dying client may still emit (its socket closing) after this.
      client.release(lostWith instanceof Error ? lostWith : new Error(String(lostWith)));
    }
  }

  end(): Promise<void> {
    return this.pool.end();
  }

  private lost(error: unknown, phase: ConnectionPhase): DatabaseConnectionError {
    if (error instanceof DatabaseConnectionError) return error;
    const reason = error instanceof Error ? error.message : String(error);
    const pgCode = (error as { code?: unknown } | null)?.code;
    const certain = phase === 'connect' || phase === 'transaction';
    const message = certain
      ? `PostgreSQL connection of schema ${this.schema} lost (${reason}); nothing was committed`
      : `PostgreSQL connection of schema ${this.schema} lost while a ${phase === 'commit' ? 'COMMIT' : 'statement'} was in flight (${reason}); it may have committed`;
    return new DatabaseConnectionError(certain ? 'UNAVAILABLE' : 'OUTCOME_UNKNOWN', message, {
      schema: this.schema,
      phase,
      ...(typeof pgCode === 'string' ? { pgCode } : {}),
    });
  }
}
