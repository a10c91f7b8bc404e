import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema, tenantIdSchema } from '../../lib/values';
import { LifecycleGetEvent } from './get-event.v1';
import { sessionSnapshotSchema } from './values';

/**
 * `apphost.lifecycle-store.get-widget-standing.v1`: everything a View bootstrap's first step (and an export's ledger
 * check) asks of the lifecycle store, read now and in one request — `get-session-standing` (is the principal revoked, the session's record) and,
 * when that session is `ACTIVE(n)`, `get-event` of the widget's function call on incarnation n's ledger. Every answer
 * is read fresh; the caller still judges them in the RFC's order (a revoked principal wins over the session, the
 * session over the event), so reading the event before the principal's answer is known reveals nothing.
 *
 * `event` is null when the session is absent or not `ACTIVE`; `{ missing }` carries the NOT_FOUND message
 * `get-event` would answer (no such event, or no widget or sealed result for the call on it).
 * Upgrade order: lifecycle-store before governed-operations and export-audit (an older store has no responder for it).
 */
export const LifecycleGetWidgetStanding = defineContract({
  service: 'lifecycle-store',
  operation: 'get-widget-standing',
  version: 1,
  request: z.strictObject({
    session: sessionKeySchema,
    principal: z.strictObject({ tenant: tenantIdSchema, subject: z.string().min(1).max(256) }),
    eventId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    functionCallId: z.string().min(1).max(128),
  }),
  response: z.strictObject({
    revoked: z.boolean(),
    session: sessionSnapshotSchema.nullable(),
    event: z.union([z.strictObject({ located: LifecycleGetEvent.response }), z.strictObject({ missing: z.string() })]).nullable(),
  }),
  errors: ['UNAVAILABLE'],
});
