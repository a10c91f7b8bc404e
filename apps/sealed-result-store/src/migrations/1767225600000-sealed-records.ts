import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The store revision this migration writes; the service refuses to serve a store of another revision. */
export const SEALED_RECORDS_REVISION = '1';

/**
 * Sealed records, the per-session incarnation floor, and staged chunked uploads. Unqualified names resolve in
 * the service's own schema (the data source's search_path).
 */
export class SealedRecords1767225600000 implements MigrationInterface {
  name = 'SealedRecords1767225600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE sealed_store_revision (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        revision text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`INSERT INTO sealed_store_revision (revision) VALUES ($1)`, [SEALED_RECORDS_REVISION]);

    // Lowest incarnation of a session that is still live: raised by create (n), revoke and purge (n + 1).
    await queryRunner.query(`
      CREATE TABLE session_incarnations (
        tenant text NOT NULL,
        app_name text NOT NULL,
        user_id text NOT NULL,
        session_id text NOT NULL,
        min_live bigint NOT NULL CHECK (min_live >= 1),
        PRIMARY KEY (tenant, app_name, user_id, session_id)
      )`);

    await queryRunner.query(`
      CREATE TABLE sealed_records (
        record_id text PRIMARY KEY,
        operation_instance_id text NOT NULL UNIQUE,
        tenant text NOT NULL,
        app_name text NOT NULL,
        user_id text NOT NULL,
        session_id text NOT NULL,
        incarnation bigint NOT NULL CHECK (incarnation >= 1),
        function_call_id text NOT NULL,
        event_id text,
        state text NOT NULL CHECK (state IN ('PENDING', 'COMMITTED')),
        schema_version integer NOT NULL,
        digest bytea NOT NULL CHECK (octet_length(digest) = 32),
        chunk_bytes integer NOT NULL CHECK (chunk_bytes > 0),
        chunk_digests bytea NOT NULL,
        size_bytes integer NOT NULL CHECK (size_bytes > 0),
        body bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        committed_at timestamptz,
        CHECK ((state = 'PENDING') = (event_id IS NULL)),
        CHECK (octet_length(body) = size_bytes),
        CHECK (octet_length(chunk_digests) = 32 * ((size_bytes + chunk_bytes - 1) / chunk_bytes))
      )`);
    // Out of line, uncompressed: chunk reads fetch only the TOAST slices they need.
    await queryRunner.query(`ALTER TABLE sealed_records ALTER COLUMN body SET STORAGE EXTERNAL`);
    await queryRunner.query(`CREATE INDEX sealed_records_session ON sealed_records (tenant, app_name, user_id, session_id, incarnation)`);
    await queryRunner.query(`CREATE INDEX sealed_records_pending_expiry ON sealed_records (expires_at) WHERE state = 'PENDING'`);

    await queryRunner.query(`
      CREATE TABLE sealed_uploads (
        upload_id text PRIMARY KEY,
        operation_instance_id text NOT NULL,
        tenant text NOT NULL,
        app_name text NOT NULL,
        user_id text NOT NULL,
        session_id text NOT NULL,
        incarnation bigint NOT NULL CHECK (incarnation >= 1),
        function_call_id text NOT NULL,
        total_bytes integer NOT NULL CHECK (total_bytes > 0),
        chunk_bytes integer NOT NULL CHECK (chunk_bytes > 0),
        chunk_count integer NOT NULL CHECK (chunk_count > 0),
        pending_ttl_ms integer NOT NULL CHECK (pending_ttl_ms >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX sealed_uploads_session ON sealed_uploads (tenant, app_name, user_id, session_id, incarnation)`);
    await queryRunner.query(`CREATE INDEX sealed_uploads_expiry ON sealed_uploads (expires_at)`);
    await queryRunner.query(`
      CREATE TABLE sealed_upload_chunks (
        upload_id text NOT NULL REFERENCES sealed_uploads (upload_id) ON DELETE CASCADE,
        chunk_index integer NOT NULL CHECK (chunk_index >= 0),
        data bytea NOT NULL,
        PRIMARY KEY (upload_id, chunk_index)
      )`);
    await queryRunner.query(`ALTER TABLE sealed_upload_chunks ALTER COLUMN data SET STORAGE EXTERNAL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sealed_upload_chunks`);
    await queryRunner.query(`DROP TABLE sealed_uploads`);
    await queryRunner.query(`DROP TABLE sealed_records`);
    await queryRunner.query(`DROP TABLE session_incarnations`);
    await queryRunner.query(`DROP TABLE sealed_store_revision`);
  }
}
