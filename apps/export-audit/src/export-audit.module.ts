import { Module, type DynamicModule } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import type { CoordinationStore } from '@apphost/coordination';
import { FAULT_POINTS, FaultPoints, type ServiceContext } from '@apphost/runtime';
import { ExportAuditStore } from './audit/export-audit.store';
import type { ExportAuditConfig } from './config';
import type { ExportAuditFaultPoint } from './export-audit.faults';
import { ExportPermits } from './exports/export-permits';
import { EXPORT_CONFIG, EXPORT_LOGGER, ExportHandlers, RetentionPurge } from './exports/export.handlers';
import { ExportService } from './exports/export.service';

/** export-audit's domain: the audit store, the permits in its own coordination prefix, the export flow and its handlers. */
@Module({})
export class ExportAuditModule {
  static register(context: ServiceContext<ExportAuditConfig>, store: ExportAuditStore, coordination: CoordinationStore): DynamicModule {
    const config = context.config;
    return {
      module: ExportAuditModule,
      providers: [
        { provide: EXPORT_CONFIG, useValue: config },
        { provide: EXPORT_LOGGER, useValue: context.logger },
        { provide: FAULT_POINTS, useValue: new FaultPoints<ExportAuditFaultPoint>() },
        { provide: ExportAuditStore, useValue: store },
        { provide: ExportPermits, useValue: new ExportPermits(coordination, config.EXPORT_PERMIT_TTL_MS) },
        {
          provide: ExportService,
          inject: [BusClient, FAULT_POINTS, ExportPermits],
          useFactory: (bus: BusClient, faults: FaultPoints<ExportAuditFaultPoint>, permits: ExportPermits) =>
            new ExportService({ store, permits, bus, faults, logger: context.logger, timeoutMs: config.EXPORT_BUS_TIMEOUT_MS }),
        },
        ExportHandlers,
        RetentionPurge,
      ],
      exports: [FAULT_POINTS, ExportAuditStore, RetentionPurge],
    };
  }
}
