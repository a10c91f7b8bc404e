import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { appAuditRecordSchema } from '../governed-operations/view-rpc.v1';
import { viewIdSchema } from '../governed-operations/view-values';

/**
 * `apphost.lifecycle-store.compact-app-audit.v1`: the retention of one View's app audit events. In ONE transaction
 * of `ACTIVE(incarnation)`, the View's operation records beyond the newest `keepLast`, and those appended before
 * `olderThan`, are deleted and folded into the View's one summary record (`appAuditRecordSchema` kind `summary`,
 * cumulative over compactions; a new summary event replaces the previous one). Records that carry
 * `sealedResultRefs` are kept: the sealed store never collects a committed record, so deleting its event would
 * orphan it. Idempotent (nothing left to fold: nothing written); never touches any other event.
 * FAILED_PRECONDITION `details.reason`: `STALE_INCARNATION`, `SESSION_CREATING`.
 */
export const LifecycleCompactAppAudit = defineContract({
  service: 'lifecycle-store',
  operation: 'compact-app-audit',
  version: 1,
  request: z.strictObject({
    session: sessionKeySchema,
    incarnation: incarnationSchema,
    viewId: viewIdSchema,
    /** How many of the View's newest operation records stay as they are. */
    keepLast: z.number().int().min(0).max(100_000),
    /** Operation records appended before this instant are folded whatever `keepLast` says. */
    olderThan: z.iso.datetime().optional(),
  }),
  response: z.strictObject({
    incarnation: incarnationSchema,
    /** Operation records this call deleted and folded into the summary (0: nothing to do, nothing written). */
    compacted: z.number().int().min(0),
    /** The View's operation records left that a later compaction may fold (sealed ones are not counted). */
    remaining: z.number().int().min(0),
    /** When the oldest of those was appended (database clock); null when none is left. */
    oldestRemainingAt: z.string().nullable(),
    /** Operation records kept because they carry sealed references. */
    retainedSealed: z.number().int().min(0),
    /** The View's summary event after this call (kind `summary`); null when nothing was ever compacted. */
    summary: z.strictObject({ eventId: z.number().int().min(1), record: appAuditRecordSchema }).nullable(),
  }),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION', 'INVALID_ARGUMENT'],
});
