import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { appendProvenanceSchema, ledgerEventInputSchema } from './values';

/**
 * `apphost.lifecycle-store.append-events.v1`: appends finalized events to `ACTIVE(incarnation)` in one statement,
 * with server-assigned monotonic ids. The finalizer strips and stamps the protected fields from `provenance` and
 * cross-validates descriptors (INVALID_ARGUMENT). FAILED_PRECONDITION `details.reason`: `STALE_INCARNATION`
 * (not the current `ACTIVE(n)`), `SESSION_CREATING`, or `STALE_FENCING_TOKEN` (a newer coordination token was seen).
 */
export const LifecycleAppendEvents = defineContract({
  service: 'lifecycle-store',
  operation: 'append-events',
  version: 1,
  request: z
    .object({
      session: sessionKeySchema,
      incarnation: incarnationSchema,
      provenance: appendProvenanceSchema,
      events: z.array(ledgerEventInputSchema).min(1).max(100),
      /** The coordinator's lock fencing token: rejected when lower than one the session already saw. */
      fencingToken: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    })
    .strict(),
  response: z.object({ incarnation: incarnationSchema, eventIds: z.array(z.number().int().min(1)) }).strict(),
  errors: ['INVALID_ARGUMENT', 'NOT_FOUND', 'FAILED_PRECONDITION'],
});
