import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { expectedStoreSchema, SEALED_MAX_CHUNKS, sealedChunkDataSchema, uploadIdSchema } from './sealed-values';

export const sealedCreateChunkRequestSchema = z.strictObject({
  uploadId: uploadIdSchema,
  index: z
    .number()
    .int()
    .min(0)
    .max(SEALED_MAX_CHUNKS - 1),
  /** Base64 of exactly `chunkBytes` bytes (the last chunk: the remainder). */
  data: sealedChunkDataSchema,
  expectedStore: expectedStoreSchema.optional(),
});
export type SealedCreateChunkRequest = z.infer<typeof sealedCreateChunkRequestSchema>;

export const sealedCreateChunkResponseSchema = z.strictObject({
  uploadId: uploadIdSchema,
  index: z.number().int().min(0),
});

/**
 * `apphost.sealed-result-store.create-chunk.v1`: stages one chunk. Idempotent per index: the same bytes again are
 * accepted, other bytes are CONFLICT (reason CHUNK_CONFLICT); a wrong index or size is INVALID_ARGUMENT.
 */
export const SealedCreateChunk = defineContract({
  service: 'sealed-result-store',
  operation: 'create-chunk',
  version: 1,
  request: sealedCreateChunkRequestSchema,
  response: sealedCreateChunkResponseSchema,
  errors: ['INVALID_ARGUMENT', 'NOT_FOUND', 'CONFLICT', 'FAILED_PRECONDITION'],
});
