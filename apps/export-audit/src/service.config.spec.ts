import { describeServiceConfig, variablesOf } from '@apphost/testing';
import { exportAuditConfigSchema } from './config';
import { exportAuditService } from './service';

/** A bad value of each of the service's own variables. */
const BAD: Record<string, string> = {
  EXPORT_PRINCIPAL_KEY: 'c2hvcnQ=',
  EXPORT_RETENTION_DAYS: '0',
  EXPORT_CASCADE_RETENTION: 'forget',
  EXPORT_PURGE_INTERVAL_MS: 'hourly',
  EXPORT_PERMIT_TTL_MS: '5',
  EXPORT_BUS_TIMEOUT_MS: '-1',
};

it('covers every variable of the service schema', () => {
  expect(Object.keys(BAD).sort()).toEqual(variablesOf(exportAuditConfigSchema));
});

describeServiceConfig(exportAuditService, 'apps/export-audit/src/main.ts', BAD);
