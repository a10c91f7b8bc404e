import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { principalSchema, sessionKeySchema } from '../../lib/values';
import { exportEventIdSchema, exportFunctionCallIdSchema, exportOperationIdSchema, exportProjectionSchema } from './export-values';

export const exportRequestSchema = z.strictObject({
  principal: principalSchema,
  session: sessionKeySchema.strict(),
  eventId: exportEventIdSchema,
  functionCallId: exportFunctionCallIdSchema,
  operationId: exportOperationIdSchema,
  projection: exportProjectionSchema,
});
export type ExportRequest = z.infer<typeof exportRequestSchema>;

export const exportResponseSchema = z.strictObject({
  exportId: z.uuid(),
  status: z.literal('released'),
  releaseCount: z.number().int().min(1),
  bytes: z.number().int().min(0),
  /** The projected result: JSON only, never HTML, never a View grant. */
  result: z.unknown(),
});
export type ExportResponse = z.infer<typeof exportResponseSchema>;

/**
 * `apphost.export-audit.export.v1`: a purpose-bound export of one sealed result (see the export-audit README for the
 * six steps). A denial is recorded (status `denied`) whenever the audit store is up; an audit-store failure answers
 * UNAVAILABLE `AUDIT_UNAVAILABLE` and releases nothing.
 */
export const ExportAuditExport = defineContract({
  service: 'export-audit',
  operation: 'export',
  version: 1,
  request: exportRequestSchema,
  response: exportResponseSchema,
  errors: ['PERMISSION_DENIED', 'NOT_FOUND', 'CONFLICT', 'FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', 'PAYLOAD_TOO_LARGE', 'UNAVAILABLE', 'DATA_LOSS'],
});
