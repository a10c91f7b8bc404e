import { describeContract } from '../../lib/describe';

/** `apphost.export-audit.describe.v1`: service identity, version, instance and store readiness. */
export const ExportAuditDescribe = describeContract('export-audit');
