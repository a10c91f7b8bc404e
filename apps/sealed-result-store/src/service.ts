import { openPostgresStore, type ServiceDefinition } from '@apphost/runtime';

/** sealed-result-store as a deployable unit: its own PostgreSQL schema `sealed_result_store`; domain operations arrive in their own issues. */
export const sealedResultStoreService: ServiceDefinition = {
  name: 'sealed-result-store',
  requires: ['postgres'],
  openStores: async (context) => [await openPostgresStore(context, { schema: 'sealed_result_store', migrations: [] })],
};
