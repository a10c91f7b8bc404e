import type { StoreReport } from '@apphost/contracts';
import type { ServiceDatabase } from '@apphost/persistence';
import { openPostgresStore, type ServiceContext, type StoreHandle } from '@apphost/runtime';
import { RegistrySchema1767300000000 } from '../migrations/1767300000000-registry-schema';
import { ConstructionLease1767300000001 } from '../migrations/1767300000001-construction-lease';
import { BindingProfile1767300000002 } from '../migrations/1767300000002-binding-profile';

export const REGISTRY_SCHEMA = 'binding_registry';

/** The registry's own PostgreSQL schema; repositories query it through `database` (one statement per round trip). */
export class RegistryStore implements StoreHandle {
  private constructor(readonly database: ServiceDatabase) {}

  static async open(context: ServiceContext): Promise<RegistryStore> {
    return new RegistryStore(
      await openPostgresStore(context, {
        schema: REGISTRY_SCHEMA,
        migrations: [RegistrySchema1767300000000, ConstructionLease1767300000001, BindingProfile1767300000002],
      }),
    );
  }

  get schema(): string {
    return this.database.schema;
  }

  report(): Promise<StoreReport> {
    return this.database.report();
  }

  close(): Promise<void> {
    return this.database.close();
  }
}
