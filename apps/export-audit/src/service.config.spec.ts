import { describeServiceConfig } from '@apphost/testing';
import { exportAuditService } from './service';

// No variables of its own yet: the PostgreSQL it requires is what its configuration can get wrong.
describeServiceConfig(exportAuditService, 'apps/export-audit/src/main.ts', { DATABASE_URL: 'mysql://127.0.0.1/audit' });
