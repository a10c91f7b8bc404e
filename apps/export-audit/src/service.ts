import type { CoordinationStore } from '@apphost/coordination';
import { defineService, openCoordinationStore, storeOf } from '@apphost/runtime';
import { ExportAuditStore } from './audit/export-audit.store';
import { exportAuditConfigSchema } from './config';
import { ExportAuditModule } from './export-audit.module';

/**
 * export-audit as a deployable unit: purpose-bound export of sealed results with one audit row per attempt in its own
 * PostgreSQL schema `export_audit`, and incarnation-bound export permits in its own Redis key prefix (see README.md).
 */
export const exportAuditService = defineService({
  name: 'export-audit',
  requires: ['postgres', 'redis'],
  config: exportAuditConfigSchema,
  openStores: async (context) => [await ExportAuditStore.open(context), await openCoordinationStore(context)],
  imports: (context, stores) => {
    const coordination = stores.find((s) => !(s instanceof ExportAuditStore)) as CoordinationStore;
    return [ExportAuditModule.register(context, storeOf(stores, ExportAuditStore, context.service), coordination)];
  },
});
