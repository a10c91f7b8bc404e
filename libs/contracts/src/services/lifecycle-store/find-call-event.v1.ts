import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { eventWidgetSchema, functionCallSchema, functionResponseSchema } from './values';

/** An event found by its call id: what a retried batch or a confirmation proof needs of it. */
export const foundCallEventSchema = z
  .object({
    eventId: z.number().int().min(1),
    invocationId: z.string().nullable(),
    functionCalls: z.array(functionCallSchema),
    functionResponses: z.array(functionResponseSchema),
    widgets: z.array(eventWidgetSchema),
    customMetadata: z.record(z.string(), z.unknown()).nullable(),
  })
  .strict();

/**
 * `apphost.lifecycle-store.find-call-event.v1`: the first event of the `ACTIVE(n)` ledger (lowest id above
 * `afterEventId`) whose function responses (`answering: "response"`) or function calls (`"call"`) carry `callId`, optionally
 * of one `invocationId`.
 * It is how a retried batch finds its own event (the first one answering the call id; a later confirmation
 * decision's event is not it) and how a confirmation id is proven issued. `event: null` when there is none. A
 * missing session is NOT_FOUND; a session that is not ACTIVE(n) is FAILED_PRECONDITION (`STALE_INCARNATION`,
 * `SESSION_CREATING`).
 */
export const LifecycleFindCallEvent = defineContract({
  service: 'lifecycle-store',
  operation: 'find-call-event',
  version: 1,
  request: z
    .object({
      session: sessionKeySchema,
      incarnation: incarnationSchema,
      callId: z.string().min(1).max(128),
      answering: z.enum(['response', 'call']),
      /** Only events of this invocation (absent: any). */
      invocationId: z.string().min(1).max(128).optional(),
      afterEventId: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
    })
    .strict(),
  response: z.object({ event: foundCallEventSchema.nullable() }).strict(),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION'],
});
