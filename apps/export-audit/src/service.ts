import { openPostgresStore, type ServiceDefinition } from '@apphost/runtime';

/** export-audit as a deployable unit: its own PostgreSQL schema `export_audit`; domain operations arrive in their own issues. */
export const exportAuditService: ServiceDefinition = {
  name: 'export-audit',
  requires: ['postgres'],
  openStores: async (context) => [await openPostgresStore(context, { schema: 'export_audit', migrations: [] })],
};
