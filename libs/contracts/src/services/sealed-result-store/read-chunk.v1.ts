import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { expectedStoreSchema, SEALED_MAX_CHUNKS, sealedChunkDataSchema, sealedRecordKeySchema } from './sealed-values';

export const sealedReadChunkRequestSchema = z.strictObject({
  key: sealedRecordKeySchema,
  index: z
    .number()
    .int()
    .min(0)
    .max(SEALED_MAX_CHUNKS - 1),
  expectedStore: expectedStoreSchema.optional(),
});
export type SealedReadChunkRequest = z.infer<typeof sealedReadChunkRequestSchema>;

export const sealedReadChunkResponseSchema = z.strictObject({
  index: z.number().int().min(0),
  data: sealedChunkDataSchema,
});
export type SealedReadChunkResponse = z.infer<typeof sealedReadChunkResponseSchema>;

/**
 * `apphost.sealed-result-store.read-chunk.v1`: one chunk of a COMMITTED record's canonical bytes, under the same
 * full-key rule as `resolve`; each chunk is verified against its store-private chunk digest before release.
 */
export const SealedReadChunk = defineContract({
  service: 'sealed-result-store',
  operation: 'read-chunk',
  version: 1,
  request: sealedReadChunkRequestSchema,
  response: sealedReadChunkResponseSchema,
  errors: ['INVALID_ARGUMENT', 'NOT_FOUND', 'FAILED_PRECONDITION', 'DATA_LOSS'],
});
