import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The store revision this migration writes; the service refuses to serve a store of another revision. */
export const EXPORT_AUDIT_REVISION = '1';

/**
 * One row per export attempt, keyed by (tenant, operation_id): the target identifiers, purpose, projection, a keyed
 * digest of the principal (never the identity), the decision and status, the reason code, the byte count, the
 * timestamps and the retention deadline. Never content. Unqualified names resolve in the service's own schema.
 */
export class ExportAttempts1768200000000 implements MigrationInterface {
  name = 'ExportAttempts1768200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE export_store_revision (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        revision text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`INSERT INTO export_store_revision (revision) VALUES ($1)`, [EXPORT_AUDIT_REVISION]);
    await q.query(`
      CREATE TABLE export_attempts (
        tenant text NOT NULL,
        operation_id text NOT NULL,
        export_id uuid NOT NULL UNIQUE,
        app_name text NOT NULL,
        user_id text NOT NULL,
        session_id text NOT NULL,
        incarnation bigint,
        event_id bigint NOT NULL,
        function_call_id text NOT NULL,
        record_id text,
        toolset_id text,
        purpose text NOT NULL CHECK (purpose = 'export'),
        projection text NOT NULL CHECK (projection IN ('content', 'structured', 'full')),
        principal_digest text NOT NULL CHECK (principal_digest ~ '^[0-9a-f]{64}$'),
        decision text NOT NULL CHECK (decision IN ('allow', 'deny')),
        status text NOT NULL CHECK (status IN ('authorized', 'released', 'denied', 'failed')),
        reason text,
        byte_count bigint CHECK (byte_count >= 0),
        release_count integer NOT NULL DEFAULT 0 CHECK (release_count >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        released_at timestamptz,
        retain_until timestamptz NOT NULL,
        PRIMARY KEY (tenant, operation_id)
      )`);
    await q.query(`CREATE INDEX export_attempts_session ON export_attempts (tenant, app_name, user_id, session_id, created_at)`);
    await q.query(`CREATE INDEX export_attempts_principal ON export_attempts (tenant, principal_digest, created_at)`);
    await q.query(`CREATE INDEX export_attempts_retention ON export_attempts (retain_until)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE export_attempts`);
    await q.query(`DROP TABLE export_store_revision`);
  }
}
