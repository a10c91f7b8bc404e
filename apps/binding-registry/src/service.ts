import { openPostgresStore, type ServiceDefinition } from '@apphost/runtime';

/** binding-registry as a deployable unit: its own PostgreSQL schema `binding_registry`; domain operations arrive in their own issues. */
export const bindingRegistryService: ServiceDefinition = {
  name: 'binding-registry',
  requires: ['postgres'],
  openStores: async (context) => [await openPostgresStore(context, { schema: 'binding_registry', migrations: [] })],
};
