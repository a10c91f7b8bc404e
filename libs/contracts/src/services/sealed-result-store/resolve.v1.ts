import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { expectedStoreSchema, sealedChunkDataSchema, sealedEnvelopeSchema, sealedRecordKeySchema, sealedResultRefSchema } from './sealed-values';

export const sealedResolveRequestSchema = z.strictObject({
  key: sealedRecordKeySchema,
  expectedStore: expectedStoreSchema.optional(),
});
export type SealedResolveRequest = z.infer<typeof sealedResolveRequestSchema>;

export const sealedResolveResponseSchema = z.discriminatedUnion('transfer', [
  z.strictObject({ transfer: z.literal('inline'), ref: sealedResultRefSchema, envelope: sealedEnvelopeSchema }),
  z.strictObject({
    transfer: z.literal('chunked'),
    ref: sealedResultRefSchema,
    totalBytes: z.number().int().positive(),
    chunkBytes: z.number().int().positive(),
    chunkCount: z.number().int().min(2),
    /** Chunk 0 of the canonical envelope bytes; `read-chunk` returns the others. */
    first: sealedChunkDataSchema,
  }),
]);
export type SealedResolveResponse = z.infer<typeof sealedResolveResponseSchema>;

/**
 * `apphost.sealed-result-store.resolve.v1`: releases the envelope only when every key field matches (a swapped or
 * foreign locator is NOT_FOUND, indistinguishable from absent) and the store-private digest verifies (else
 * DATA_LOSS, reason DIGEST_MISMATCH, never bytes). A PENDING record named with its appended event's id is committed
 * to that event by the same guarded statement as `commit` (crash-after-append recovery), then released.
 */
export const SealedResolve = defineContract({
  service: 'sealed-result-store',
  operation: 'resolve',
  version: 1,
  request: sealedResolveRequestSchema,
  response: sealedResolveResponseSchema,
  errors: ['INVALID_ARGUMENT', 'NOT_FOUND', 'FAILED_PRECONDITION', 'DATA_LOSS'],
});
