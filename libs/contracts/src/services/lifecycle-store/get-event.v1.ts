import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { descriptorSealedResultRefSchema, eventWidgetSchema } from './values';

/**
 * `apphost.lifecycle-store.get-event.v1`: one function call's sealed result locator on one event of the current
 * `ACTIVE(n)` ledger — the session, incarnation, event and function call all verified against the ledger. A missing
 * session, event or call, or one of another incarnation, is NOT_FOUND (a foreign locator reads as absent); a session
 * that is not ACTIVE(n) is FAILED_PRECONDITION (`STALE_INCARNATION`, `SESSION_CREATING`). The call is found when the
 * event carries a descriptor for it, a legacy widget of its tool, or an event-level sealed reference; `widget` and
 * `call` say what the event recorded (Views render from them; export needs only `sealedResultRef`).
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
      /** The call's widget: its descriptor, or the legacy payload of a profile-less toolset (matched by tool name); null for an event-level reference. */
      widget: eventWidgetSchema.nullable(),
      /** The function call as the event recorded it (model-catalog name and arguments), when the event carries it. */
      call: z
        .object({ name: z.string(), args: z.record(z.string(), z.unknown()) })
        .strict()
        .nullable(),
    })
    .strict(),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION'],
});
