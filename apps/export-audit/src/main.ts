import 'reflect-metadata';
import { runStandalone } from '@apphost/runtime';
import { exportAuditService } from './service';

void runStandalone(exportAuditService);
