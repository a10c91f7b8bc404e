import { openPostgresStore, type ServiceDefinition } from '@apphost/runtime';

/** export-audit as a deployable unit: for now only `describe` and its own PostgreSQL schema `export_audit` (no export operations yet). */
export const exportAuditService: ServiceDefinition = {
  name: 'export-audit',
  requires: ['postgres'],
  openStores: async (context) => [await openPostgresStore(context, { schema: 'export_audit', migrations: [] })],
};
