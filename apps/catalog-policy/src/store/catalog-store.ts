import type { StoreReport } from '@apphost/contracts';
import type { ServiceDatabase } from '@apphost/persistence';
import { openPostgresStore, type ServiceContext, type StoreHandle } from '@apphost/runtime';
import { CatalogSchema1767400000000 } from '../migrations/1767400000000-catalog-schema';

export const CATALOG_SCHEMA = 'catalog_policy';

/** The service's own PostgreSQL schema; repositories query it through `database` (the search_path is the schema). */
export class CatalogStore implements StoreHandle {
  private constructor(readonly database: ServiceDatabase) {}

  static async open(context: ServiceContext): Promise<CatalogStore> {
    return new CatalogStore(await openPostgresStore(context, { schema: CATALOG_SCHEMA, migrations: [CatalogSchema1767400000000] }));
  }

  report(): Promise<StoreReport> {
    return this.database.report();
  }

  close(): Promise<void> {
    return this.database.close();
  }
}
