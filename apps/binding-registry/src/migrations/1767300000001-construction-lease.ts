import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A construction holds a lease: the MATERIALIZING winner writes its token and an expiry, and only that token can
 * finish. A constructor that died leaves an expired lease that the next attempt reclaims (a new token), so a binding
 * is never wedged in MATERIALIZING; `construction_attempts` counts the claims, `constructions` stays ≤ 1.
 */
export class ConstructionLease1767300000001 implements MigrationInterface {
  name = 'ConstructionLease1767300000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE bindings
        ADD COLUMN construction_token uuid,
        ADD COLUMN construction_lease_expires_at timestamptz,
        ADD COLUMN construction_attempts integer NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE bindings DROP COLUMN construction_token, DROP COLUMN construction_lease_expires_at, DROP COLUMN construction_attempts`);
  }
}
