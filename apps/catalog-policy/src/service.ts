import { openPostgresStore, type ServiceDefinition } from '@apphost/runtime';

/** catalog-policy as a deployable unit: its own PostgreSQL schema `catalog_policy`; domain operations arrive in their own issues. */
export const catalogPolicyService: ServiceDefinition = {
  name: 'catalog-policy',
  requires: ['postgres'],
  openStores: async (context) => [await openPostgresStore(context, { schema: 'catalog_policy', migrations: [] })],
};
