import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What GC and the recovery pass need to ask the authoritative ledger about PENDING records:
 *
 * - `ledger_checked_at`: when the recovery pass last asked the ledger about a PENDING record and found no event
 *   referencing it (an orphan, or an append still in flight), so each record is asked about once before its expiry;
 *   GC asks again, authoritatively, before it deletes.
 * - `sealed_records_pending_unchecked`: the recovery pass's scan, PENDING records not yet asked about, oldest first.
 *   GC's scan keeps `sealed_records_pending_expiry`.
 *
 * Additive only: the store revision stays '1'.
 */
export class SealedRecordsLedgerCheck1769000000001 implements MigrationInterface {
  name = 'SealedRecordsLedgerCheck1769000000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sealed_records ADD COLUMN ledger_checked_at timestamptz NULL`);
    await queryRunner.query(
      `CREATE INDEX sealed_records_pending_unchecked ON sealed_records (created_at) WHERE state = 'PENDING' AND ledger_checked_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX sealed_records_pending_unchecked`);
    await queryRunner.query(`ALTER TABLE sealed_records DROP COLUMN ledger_checked_at`);
  }
}
