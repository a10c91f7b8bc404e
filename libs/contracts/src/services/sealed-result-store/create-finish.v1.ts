import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { expectedStoreSchema, sealedCreateResponseSchema, uploadIdSchema } from './sealed-values';

export const sealedCreateFinishRequestSchema = z.strictObject({
  uploadId: uploadIdSchema,
  expectedStore: expectedStoreSchema.optional(),
});
export type SealedCreateFinishRequest = z.infer<typeof sealedCreateFinishRequestSchema>;

/**
 * `apphost.sealed-result-store.create-finish.v1`: assembles the staged chunks, validates them exactly like an
 * inline `create` (UTF-8 JSON, envelope schema, canonical limits) and creates the record with `create`'s
 * semantics. The upload is removed on success; the retry unit of a chunked create is the whole transfer with the
 * same operation instance (which converges on the same record).
 */
export const SealedCreateFinish = defineContract({
  service: 'sealed-result-store',
  operation: 'create-finish',
  version: 1,
  request: sealedCreateFinishRequestSchema,
  response: sealedCreateResponseSchema,
  errors: ['INVALID_ARGUMENT', 'PAYLOAD_TOO_LARGE', 'NOT_FOUND', 'CONFLICT', 'FAILED_PRECONDITION'],
});
