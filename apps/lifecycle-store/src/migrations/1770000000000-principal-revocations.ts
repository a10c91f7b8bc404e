import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Durable principal revocation: a row per revoked principal, keyed by tenant and a purpose-tagged digest of the
 * subject (the raw subject is never stored). Restoring deletes the row, so a row present means "revoked since
 * `revoked_at`".
 */
export class PrincipalRevocations1770000000000 implements MigrationInterface {
  name = 'PrincipalRevocations1770000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE principal_revocations (
        tenant text NOT NULL,
        subject_digest text NOT NULL CHECK (subject_digest ~ '^[0-9a-f]{64}$'),
        revoked_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant, subject_digest)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE principal_revocations`);
  }
}
