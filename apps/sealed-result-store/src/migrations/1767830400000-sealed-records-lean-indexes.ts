import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The CHECK constraints of 1767225600000, by the names PostgreSQL gave them, and their expressions. */
const SEPARATE_CHECKS: [name: string, expression: string][] = [
  ['sealed_records_incarnation_check', 'incarnation >= 1'],
  ['sealed_records_state_check', `state IN ('PENDING', 'COMMITTED')`],
  ['sealed_records_digest_check', 'octet_length(digest) = 32'],
  ['sealed_records_chunk_bytes_check', 'chunk_bytes > 0'],
  ['sealed_records_size_bytes_check', 'size_bytes > 0'],
  ['sealed_records_check', `(state = 'PENDING') = (event_id IS NULL)`],
  ['sealed_records_check1', 'octet_length(body) = size_bytes'],
  ['sealed_records_check2', 'octet_length(chunk_digests) = 32 * ((size_bytes + chunk_bytes - 1) / chunk_bytes)'],
];

/** Key columns compared only for equality (and purge's incarnation range): byte order, no locale collation. */
const RECORD_KEY_TEXT = ['tenant', 'app_name', 'user_id', 'session_id', 'record_id', 'operation_instance_id'];
const SESSION_KEY_TEXT = ['tenant', 'app_name', 'user_id', 'session_id'];
const collate = (columns: string[], collation: string) => columns.map((c) => `ALTER COLUMN ${c} TYPE text COLLATE "${collation}"`).join(', ');

/**
 * Fewer index entries and less per-statement work on the hot path (create, bind), same data and invariants:
 *
 * - The primary key becomes the full record key `(tenant, app_name, user_id, session_id, incarnation, record_id)`.
 *   Every keyed statement (commit, resolve, read-chunk) names all of it, and purge's `session … AND incarnation <= n`
 *   is a prefix range of it, so the separate `sealed_records_session` index goes: one index entry less per insert,
 *   and one less for every update that is not HOT (the bind).
 * - The text key columns of `sealed_records` and `session_incarnations` use the "C" collation: they are only ever
 *   compared for equality, and every index probe then compares bytes instead of calling the locale's strcoll.
 * - The eight CHECK constraints become one conjunction with the same meaning. PostgreSQL parses, plans and compiles
 *   the CHECK expressions of a table again for every INSERT and UPDATE statement (the create and the bind both pay);
 *   one constraint saves the per-constraint part of that, the expression itself is as large as before.
 *
 * The store revision stays '1': the stored bytes, keys, states and references are unchanged.
 */
export class SealedRecordsLeanIndexes1767830400000 implements MigrationInterface {
  name = 'SealedRecordsLeanIndexes1767830400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX sealed_records_session`);
    await queryRunner.query(`ALTER TABLE sealed_records DROP CONSTRAINT sealed_records_pkey`);
    await queryRunner.query(`ALTER TABLE sealed_records ${collate(RECORD_KEY_TEXT, 'C')}`);
    await queryRunner.query(
      `ALTER TABLE sealed_records ADD CONSTRAINT sealed_records_pkey PRIMARY KEY (tenant, app_name, user_id, session_id, incarnation, record_id)`,
    );
    await queryRunner.query(`ALTER TABLE session_incarnations ${collate(SESSION_KEY_TEXT, 'C')}`);
    await queryRunner.query(
      `ALTER TABLE sealed_records ${SEPARATE_CHECKS.map(([name]) => `DROP CONSTRAINT ${name}`).join(', ')},
         ADD CONSTRAINT sealed_records_valid CHECK (${SEPARATE_CHECKS.map(([, expression]) => `(${expression})`).join(' AND ')})`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE sealed_records DROP CONSTRAINT sealed_records_valid,
         ${SEPARATE_CHECKS.map(([name, expression]) => `ADD CONSTRAINT ${name} CHECK (${expression})`).join(', ')}`,
    );
    await queryRunner.query(`ALTER TABLE session_incarnations ${collate(SESSION_KEY_TEXT, 'default')}`);
    await queryRunner.query(`ALTER TABLE sealed_records DROP CONSTRAINT sealed_records_pkey`);
    await queryRunner.query(`ALTER TABLE sealed_records ${collate(RECORD_KEY_TEXT, 'default')}`);
    await queryRunner.query(`ALTER TABLE sealed_records ADD CONSTRAINT sealed_records_pkey PRIMARY KEY (record_id)`);
    await queryRunner.query(`CREATE INDEX sealed_records_session ON sealed_records (tenant, app_name, user_id, session_id, incarnation)`);
  }
}
