import { openPostgresStore, type ServiceDefinition } from '@apphost/runtime';

/** lifecycle-store as a deployable unit: its own PostgreSQL schema `lifecycle_store`; domain operations arrive in their own issues. */
export const lifecycleStoreService: ServiceDefinition = {
  name: 'lifecycle-store',
  requires: ['postgres'],
  openStores: async (context) => [await openPostgresStore(context, { schema: 'lifecycle_store', migrations: [] })],
};
