import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';

/** The deletion-cascade request every participant store accepts: the session and the incarnation being deleted. */
export const sealedCascadeRequestSchema = z.strictObject({
  session: sessionKeySchema.strict(),
  incarnation: incarnationSchema,
});
export type SealedCascadeRequest = z.infer<typeof sealedCascadeRequestSchema>;

export const sealedPurgeResponseSchema = z.strictObject({
  done: z.literal(true),
  deletedRecords: z.number().int().min(0),
});

/**
 * `apphost.sealed-result-store.purge.v1`: the store's deletion-cascade participant. Deletes every record and staged
 * upload of the session at or below `incarnation` and fences those incarnations (later create/commit/resolve naming
 * them fail FAILED_PRECONDITION, reason STALE_INCARNATION). Idempotent: repeating it is `done` with 0 deleted.
 */
export const SealedPurge = defineContract({
  service: 'sealed-result-store',
  operation: 'purge',
  version: 1,
  request: sealedCascadeRequestSchema,
  response: sealedPurgeResponseSchema,
  errors: ['INVALID_ARGUMENT'],
});
