import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { eventIdSchema, expectedStoreSchema, sealedRecordKeySchema, sealedResultRefSchema } from './sealed-values';

export const sealedCommitRequestSchema = z.strictObject({
  /** The full key; `eventId` is the appended event the record is bound to. */
  key: sealedRecordKeySchema,
  expectedStore: expectedStoreSchema.optional(),
});
export type SealedCommitRequest = z.infer<typeof sealedCommitRequestSchema>;

export const sealedCommitResponseSchema = z.strictObject({
  ref: sealedResultRefSchema,
  state: z.literal('COMMITTED'),
  eventId: eventIdSchema,
});
export type SealedCommitResponse = z.infer<typeof sealedCommitResponseSchema>;

/**
 * `apphost.sealed-result-store.commit.v1`: binds a PENDING record to its appended event (PENDING → COMMITTED).
 * Idempotent for the same event; another event is CONFLICT (EVENT_CONFLICT). A record GC already collected, or any
 * key mismatch, is NOT_FOUND; an old incarnation is FAILED_PRECONDITION (STALE_INCARNATION).
 */
export const SealedCommit = defineContract({
  service: 'sealed-result-store',
  operation: 'commit',
  version: 1,
  request: sealedCommitRequestSchema,
  response: sealedCommitResponseSchema,
  errors: ['INVALID_ARGUMENT', 'NOT_FOUND', 'CONFLICT', 'FAILED_PRECONDITION'],
});
