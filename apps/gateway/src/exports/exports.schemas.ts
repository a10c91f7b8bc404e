import { z } from 'zod';
import {
  appNameSchema,
  exportAuditRowSchema,
  exportEventIdSchema,
  exportFunctionCallIdSchema,
  exportOperationIdSchema,
  exportProjectionSchema,
  exportResponseSchema,
  sessionIdSchema,
  userIdSchema,
} from '@apphost/contracts';

/** `POST /v1/exports` body: the target (the caller's own session), the operation id and the projection. */
export const exportBodySchema = z.strictObject({
  appName: appNameSchema,
  sessionId: sessionIdSchema,
  eventId: exportEventIdSchema,
  functionCallId: exportFunctionCallIdSchema,
  operationId: exportOperationIdSchema,
  projection: exportProjectionSchema,
});

/** `GET /v1/exports` query: one session of the caller's tenant (any user; `userId` defaults to the caller). */
export const exportsQuerySchema = z.strictObject({
  appName: appNameSchema,
  sessionId: sessionIdSchema,
  userId: userIdSchema.optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

export const exportReplySchema = exportResponseSchema;
export const exportsPageSchema = z.strictObject({ exports: z.array(exportAuditRowSchema) });
