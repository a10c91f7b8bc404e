import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { TEST_DATABASE_URL } from '@apphost/testing';

/** One durable write a path's design requires: a committed INSERT of `bytes` of payload into its own table. */
export interface FloorCommit {
  name: string;
  bytes: number;
}

export interface CommitFloor {
  /** One operation of the floor: every commit of the list, one after another, each its own fsync'd transaction. */
  op(): Promise<void>;
  /** One primary-key read of a committed row (a retained-outcome lookup before any execution): one round trip. */
  lookup(): Promise<void>;
  stop(): Promise<void>;
}

/** The stores' pool size, so the floor and the path get the same concurrency from PostgreSQL. */
const POOL_SIZE = 10;

/**
 * The floor of a path: the durable commits its design requires (for a model batch the seal and the append; for a
 * View call the audit event), run raw on the same PostgreSQL in the same process, so a bench can say how far the
 * path's added time is above what no implementation can skip. `synchronous_commit` must be on, as for the stores.
 */
export async function startCommitFloor(commits: readonly FloorCommit[]): Promise<CommitFloor> {
  const schema = `floor_${randomBytes(4).toString('hex')}`;
  const pool = new Pool({ connectionString: TEST_DATABASE_URL, max: POOL_SIZE });
  const { rows } = await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
  if (rows[0].synchronous_commit !== 'on') throw new Error(`synchronous_commit is ${rows[0].synchronous_commit}: the floor must fsync every commit`);
  await pool.query(`CREATE SCHEMA ${schema}`);
  for (const commit of commits) {
    await pool.query(`CREATE TABLE ${schema}.${commit.name} (id bigserial PRIMARY KEY, key text NOT NULL UNIQUE, body bytea NOT NULL)`);
  }
  const payloads = commits.map((commit) => ({ sql: `INSERT INTO ${schema}.${commit.name} (key, body) VALUES ($1, $2)`, body: randomBytes(commit.bytes) }));
  const lookupSql = `SELECT body FROM ${schema}.${commits[0].name} WHERE key = $1`;
  await pool.query(payloads[0].sql, ['k0', payloads[0].body]);
  let n = 0;
  return {
    async op() {
      const key = `k${++n}`;
      for (const { sql, body } of payloads) await pool.query({ name: sql, text: sql, values: [key, body] });
    },
    async lookup() {
      await pool.query({ name: lookupSql, text: lookupSql, values: ['k0'] });
    },
    async stop() {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await pool.end();
    },
  };
}
