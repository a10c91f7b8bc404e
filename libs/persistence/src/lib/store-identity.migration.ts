import { randomUUID } from 'node:crypto';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * TypeORM orders migrations by the 13-digit timestamp ending their name; timestamp 1 sorts this library-owned
 * migration before every service migration.
 */
export const STORE_IDENTITY_MIGRATION = 'ApphostStoreIdentity0000000000001';

/**
 * Creates `<schema>.store_identity`: one row, written once, naming the store. A service compares it on every
 * boot (and on every readiness probe) to prove it is talking to the same store as before.
 */
export function storeIdentityMigration(schema: string, service: string): new () => MigrationInterface {
  return class ApphostStoreIdentity0000000000001 implements MigrationInterface {
    name = STORE_IDENTITY_MIGRATION;

    async up(queryRunner: QueryRunner): Promise<void> {
      // `singleton` is the primary key and can only be true: the table can never hold a second identity.
      await queryRunner.query(
        `CREATE TABLE "${schema}".store_identity (
           singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
           namespace uuid NOT NULL,
           service text NOT NULL,
           created_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      // The uuid comes from Node so the migration needs no extension and no particular server version.
      await queryRunner.query(`INSERT INTO "${schema}".store_identity (namespace, service) VALUES ($1, $2)`, [randomUUID(), service]);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`DROP TABLE "${schema}".store_identity`);
    }
  };
}
