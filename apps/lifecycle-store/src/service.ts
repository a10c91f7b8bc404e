import type { ServiceDatabase } from '@apphost/persistence';
import { defineService, openPostgresStore, type StoreHandle } from '@apphost/runtime';
import { lifecycleConfigSchema } from './config';
import { LifecycleModule } from './lifecycle.module';
import { LIFECYCLE_MIGRATIONS } from './migrations/1761000000001-lifecycle-schema';
import { LifecycleCallLookup1764590000001 } from './migrations/1764590000001-call-lookup';
import { SessionEventsSealedRefs1769000000000 } from './migrations/1769000000000-session-events-sealed-refs';
import { PrincipalRevocations1770000000000 } from './migrations/1770000000000-principal-revocations';
import { AppAuditByView1771000000000 } from './migrations/1771000000000-app-audit-by-view';
import { PendingMessages1772000000000 } from './migrations/1772000000000-pending-messages';

const isServiceDatabase = (store: StoreHandle): store is ServiceDatabase & StoreHandle => 'dataSource' in store;

/**
 * lifecycle-store as a deployable unit: sessions, incarnations, the fenced create, cascade delete and the event
 * ledger, in its own PostgreSQL schema `lifecycle_store`.
 */
export const lifecycleStoreService = defineService({
  name: 'lifecycle-store',
  requires: ['postgres'],
  config: lifecycleConfigSchema,
  openStores: async (context) => [
    await openPostgresStore(context, {
      schema: 'lifecycle_store',
      migrations: [
        ...LIFECYCLE_MIGRATIONS,
        LifecycleCallLookup1764590000001,
        SessionEventsSealedRefs1769000000000,
        PrincipalRevocations1770000000000,
        AppAuditByView1771000000000,
        PendingMessages1772000000000,
      ],
    }),
  ],
  imports: (context, stores) => {
    const database = stores.find(isServiceDatabase);
    if (!database) throw new Error('lifecycle-store: its PostgreSQL store is not open');
    return [LifecycleModule.register(context, database)];
  },
});
