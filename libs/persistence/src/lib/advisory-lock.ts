import { createHash } from 'node:crypto';
import type { Client } from 'pg';

/**
 * A stable 64-bit advisory-lock key for a schema. Hashing a namespaced string keeps it clear of keys other
 * code may take with small integers; every replica derives the same key, which is what serialises them.
 */
export function advisoryLockKey(schema: string): string {
  const digest = createHash('sha256').update(`apphost:persistence:migrate:${schema}`).digest();
  return BigInt.asIntN(64, digest.readBigUInt64BE(0)).toString();
}

/**
 * Runs `work` while holding a session-level advisory lock on `client`. The lock lives on that one connection,
 * so it is released by the unlock below or, should the process die, by PostgreSQL when the session ends.
 */
export async function withAdvisoryLock<T>(client: Client, key: string, timeoutMs: number, work: () => Promise<T>, onWait?: () => void): Promise<T> {
  const tried = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key]);
  if (!tried.rows[0]?.locked) {
    onWait?.();
    // lock_timeout bounds the wait: a replica stuck holding the lock must not hang every other boot forever.
    await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    try {
      await client.query('SELECT pg_advisory_lock($1::bigint)', [key]);
    } finally {
      await client.query('RESET lock_timeout').catch(() => undefined);
    }
  }
  try {
    return await work();
  } finally {
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => undefined);
  }
}
