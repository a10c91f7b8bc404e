import { serviceConformance } from '@apphost/testing';
import { exportAuditService } from './service';

serviceConformance(exportAuditService, 'apps/export-audit/src/main.ts');
