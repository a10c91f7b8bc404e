import type { Database } from '@apphost/persistence';

export interface KeyRow {
  keyId: string;
  state: 'ACTIVE' | 'VERIFYING' | 'RETIRED';
  material: Buffer | null;
  wrapped: boolean;
  verifyUntil: Date | null;
}

/** Every replica's key ring listens here; the payload is the registry schema whose ring changed. */
export const KEY_RING_CHANNEL = 'apphost_key_ring';

/** The key ring's rows. Material is stored wrapped under the host key when one is configured. */
export class KeysRepository {
  constructor(
    private readonly db: Database,
    private readonly schema: string,
  ) {}

  async all(): Promise<KeyRow[]> {
    const { rows } = await this.db.query(`SELECT key_id, state, material, wrapped, verify_until FROM key_ring ORDER BY created_at, key_id`);
    return rows.map((r) => ({ keyId: r.key_id, state: r.state, material: r.material, wrapped: r.wrapped, verifyUntil: r.verify_until }));
  }

  /** The first key, when the ring is empty (the unique ACTIVE index settles a race between replicas). */
  async insertFirst(keyId: string, material: Buffer, wrapped: boolean): Promise<boolean> {
    const r = await this.db.query(
      `INSERT INTO key_ring (key_id, state, material, wrapped) SELECT $1, 'ACTIVE', $2, $3 WHERE NOT EXISTS (SELECT 1 FROM key_ring) ON CONFLICT DO NOTHING`,
      [keyId, material, wrapped],
    );
    return r.rowCount === 1;
  }

  /**
   * One rotation in one transaction: the current ACTIVE key (compared by id) verifies until now + window; keys
   * past their window are retired and their material erased; the new key becomes ACTIVE.
   */
  async rotate(currentKeyId: string, keyId: string, material: Buffer, wrapped: boolean, windowMs: number): Promise<boolean> {
    const rotated = await this.db.transaction(async (tx) => {
      const demoted = await tx.query(
        `UPDATE key_ring SET state = 'VERIFYING', verify_until = now() + make_interval(secs => $2::double precision / 1000) WHERE key_id = $1 AND state = 'ACTIVE'`,
        [currentKeyId, windowMs],
      );
      if (demoted.rowCount !== 1) return false; // nothing written, nothing to commit
      await tx.query(`INSERT INTO key_ring (key_id, state, material, wrapped) VALUES ($1, 'ACTIVE', $2, $3)`, [keyId, material, wrapped]);
      // Delivered at commit: every replica drops its loaded ring before it can sign with the demoted key again.
      await tx.query('SELECT pg_notify($1, $2)', [KEY_RING_CHANNEL, this.schema]);
      return true;
    });
    if (rotated) await this.retireExpired();
    return rotated;
  }

  async retireExpired(): Promise<void> {
    await this.db.query(`UPDATE key_ring SET state = 'RETIRED', material = NULL WHERE state = 'VERIFYING' AND verify_until <= now()`);
  }
}
