import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { descriptorSealedResultRefSchema } from './values';

/**
 * `apphost.lifecycle-store.get-event.v1`: one function call's sealed result locator on one event of the current
 * `ACTIVE(n)` ledger — the session, incarnation, event and function call all verified against the ledger. A missing
 * session, event or call, or one of another incarnation, is NOT_FOUND (a foreign locator reads as absent); a session
 * that is not ACTIVE(n) is FAILED_PRECONDITION (`STALE_INCARNATION`, `SESSION_CREATING`).
 */
export const LifecycleGetEvent = defineContract({
  service: 'lifecycle-store',
  operation: 'get-event',
  version: 1,
  request: z
    .object({
      session: sessionKeySchema,
      incarnation: incarnationSchema,
      eventId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
      functionCallId: z.string().min(1).max(128),
    })
    .strict(),
  response: z
    .object({
      incarnation: incarnationSchema,
      eventId: z.number().int().min(1),
      functionCallId: z.string(),
      /** The descriptor's binding of the call's widget (null: a legacy widget or an event-level reference). */
      toolsetId: z.string().nullable(),
      bindingRevision: z.string().nullable(),
      sealedResultRef: descriptorSealedResultRefSchema.nullable(),
    })
    .strict(),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION'],
});
