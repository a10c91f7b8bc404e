import { AppHostError, SealedReasons, type StoreReport } from '@apphost/contracts';
import type { ServiceDatabase } from '@apphost/persistence';
import { openPostgresStore, type ServiceContext, type StoreHandle } from '@apphost/runtime';
import { SEALED_RECORDS_REVISION, SealedRecords1767225600000 } from '../migrations/1767225600000-sealed-records';
import { SealedRecordsLeanIndexes1767830400000 } from '../migrations/1767830400000-sealed-records-lean-indexes';
import { SealedRecordsLedgerCheck1769000000001 } from '../migrations/1769000000001-sealed-records-ledger-check';

export const SEALED_SCHEMA = 'sealed_result_store';

/** The revision this code serves; a store persisted at another revision is refused at startup. */
export const SEALED_STORE_REVISION = SEALED_RECORDS_REVISION;

/**
 * The service's PostgreSQL store: the persistence library's handle (schema, migrations, store_identity with the
 * namespace) plus the persisted store revision, both reported by `describe`.
 */
export class SealedStore implements StoreHandle {
  private constructor(
    readonly database: ServiceDatabase,
    readonly revision: string,
  ) {}

  static async open(context: ServiceContext): Promise<SealedStore> {
    const database = await openPostgresStore(context, {
      schema: SEALED_SCHEMA,
      migrations: [SealedRecords1767225600000, SealedRecordsLeanIndexes1767830400000, SealedRecordsLedgerCheck1769000000001],
    });
    try {
      const { rows } = await database.query<{ revision: string }>(`SELECT revision FROM "${database.schema}".sealed_store_revision`);
      const revision = rows[0]?.revision;
      if (revision !== SEALED_STORE_REVISION) {
        throw new AppHostError(
          'FAILED_PRECONDITION',
          `sealed store ${database.schema} is at revision ${String(revision)}; this build serves revision ${SEALED_STORE_REVISION}`,
          {
            details: SealedReasons.details('STORE_MISMATCH', { schema: database.schema }),
          },
        );
      }
      return new SealedStore(database, revision);
    } catch (error) {
      await database.close();
      throw error;
    }
  }

  get namespace(): string {
    return this.database.identity.namespace;
  }

  async report(): Promise<StoreReport> {
    return { ...(await this.database.report()), revision: this.revision };
  }

  close(): Promise<void> {
    return this.database.close();
  }
}
