import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema } from '../../lib/values';
import { exportAuditRowSchema } from './export-values';

/** `apphost.export-audit.list-exports.v1`: the redacted audit rows of one session (every incarnation), oldest first. */
export const ExportAuditListExports = defineContract({
  service: 'export-audit',
  operation: 'list-exports',
  version: 1,
  request: z.strictObject({ session: sessionKeySchema.strict(), limit: z.number().int().min(1).max(500).optional() }),
  response: z.strictObject({ exports: z.array(exportAuditRowSchema) }),
  errors: [],
});
