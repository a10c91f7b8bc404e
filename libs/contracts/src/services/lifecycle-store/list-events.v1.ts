import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { publicEventSchema } from './values';

/**
 * `apphost.lifecycle-store.list-events.v1`: one page of the current `ACTIVE(n)` ledger in id order, in its public
 * serialization (`audience: "model"` leaves out app audit events). `incarnation`, when given, must be the current one (else FAILED_PRECONDITION `STALE_INCARNATION`).
 */
export const LifecycleListEvents = defineContract({
  service: 'lifecycle-store',
  operation: 'list-events',
  version: 1,
  request: z
    .object({
      session: sessionKeySchema,
      incarnation: incarnationSchema.optional(),
      afterId: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
      limit: z.number().int().min(1).max(500).optional(),
      /** `model`: without `audience: "app_audit"` events (what a model-facing read shows); `all` (default): every event. */
      audience: z.enum(['model', 'all']).optional(),
    })
    .strict(),
  response: z.object({ incarnation: incarnationSchema, events: z.array(publicEventSchema), nextAfterId: z.number().int().min(1).nullable() }).strict(),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION'],
});
