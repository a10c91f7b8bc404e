import { z } from 'zod';
import { appNameSchema, incarnationSchema, sessionIdSchema, userIdSchema } from '../../lib/values';
import { SEALED_MAX_CANONICAL_BYTES } from '../sealed-result-store/sealed-values';

/** What an export releases: `content` (the model projection), `structured` (structuredContent) or `full` (the whole CallToolResult). */
export const EXPORT_PROJECTIONS = ['content', 'structured', 'full'] as const;
export const exportProjectionSchema = z.enum(EXPORT_PROJECTIONS);
export type ExportProjection = z.infer<typeof exportProjectionSchema>;

export const EXPORT_STATUSES = ['authorized', 'released', 'denied', 'failed'] as const;
export const exportStatusSchema = z.enum(EXPORT_STATUSES);
export type ExportStatus = z.infer<typeof exportStatusSchema>;

/** A client-chosen export operation id: a retry with the same id and target answers the same record. */
export const exportOperationIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/, 'operation id: 1-128 chars of [A-Za-z0-9._:@-]');
/** The ledger event id, as the public events list shows it. */
export const exportEventIdSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
export const exportFunctionCallIdSchema = z.string().min(1).max(128);

/**
 * The largest export a profile may allow: the largest sealed record (a projection is never larger). A reply over the
 * bus payload limit moves in chunks (the bus's chunked replies), so the one materialized answer needs no lower bound.
 */
export const EXPORT_MAX_BYTES_LIMIT = SEALED_MAX_CANONICAL_BYTES;

/**
 * A host profile's export policy: the projections it allows, bytes per export, exports per principal per minute, and
 * the bulk cap (releases per session incarnation). Absent, `DEFAULT_EXPORT_POLICY` applies: content only, small.
 */
export const exportPolicySchema = z.strictObject({
  projections: z.array(exportProjectionSchema).min(1).max(3),
  maxBytes: z.number().int().min(1).max(EXPORT_MAX_BYTES_LIMIT),
  perPrincipalPerMinute: z.number().int().min(1).max(10_000),
  bulkCap: z.number().int().min(1).max(100_000),
});
export type ExportPolicy = z.infer<typeof exportPolicySchema>;

export const DEFAULT_EXPORT_POLICY: ExportPolicy = Object.freeze({
  projections: ['content'] as ExportProjection[],
  maxBytes: 256 * 1024,
  perPrincipalPerMinute: 30,
  bulkCap: 100,
});

/** An audit row as GET /v1/exports shows it: targets, decision and counts; never content, never the principal digest. */
export const exportAuditRowSchema = z.strictObject({
  exportId: z.uuid(),
  operationId: exportOperationIdSchema,
  appName: appNameSchema,
  userId: userIdSchema,
  sessionId: sessionIdSchema,
  incarnation: incarnationSchema.nullable(),
  eventId: exportEventIdSchema,
  functionCallId: exportFunctionCallIdSchema,
  purpose: z.literal('export'),
  projection: exportProjectionSchema,
  decision: z.enum(['allow', 'deny']),
  status: exportStatusSchema,
  reason: z.string().nullable(),
  bytes: z.number().int().min(0).nullable(),
  releaseCount: z.number().int().min(0),
  createdAt: z.string(),
  updatedAt: z.string(),
  releasedAt: z.string().nullable(),
  retainUntil: z.string(),
});
export type ExportAuditRow = z.infer<typeof exportAuditRowSchema>;
