import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { pendingTtlMsSchema } from './create.v1';
import { expectedStoreSchema, operationInstanceIdSchema, sealedCreateScopeSchema, uploadIdSchema } from './sealed-values';

export const sealedCreateBeginRequestSchema = z.strictObject({
  scope: sealedCreateScopeSchema,
  operationInstanceId: operationInstanceIdSchema,
  /** Byte length of the envelope's canonical JSON (UTF-8) that will follow in chunks. */
  totalBytes: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  pendingTtlMs: pendingTtlMsSchema.optional(),
  expectedStore: expectedStoreSchema.optional(),
});
export type SealedCreateBeginRequest = z.infer<typeof sealedCreateBeginRequestSchema>;

export const sealedCreateBeginResponseSchema = z.strictObject({
  uploadId: uploadIdSchema,
  chunkBytes: z.number().int().positive(),
  chunkCount: z.number().int().positive(),
  expiresAt: z.iso.datetime(),
});
export type SealedCreateBeginResponse = z.infer<typeof sealedCreateBeginResponseSchema>;

/**
 * `apphost.sealed-result-store.create-begin.v1`: opens a bounded staged upload for an envelope too large for one
 * message. `totalBytes` above the store's limit is PAYLOAD_TOO_LARGE before anything is written.
 */
export const SealedCreateBegin = defineContract({
  service: 'sealed-result-store',
  operation: 'create-begin',
  version: 1,
  request: sealedCreateBeginRequestSchema,
  response: sealedCreateBeginResponseSchema,
  errors: ['INVALID_ARGUMENT', 'PAYLOAD_TOO_LARGE', 'FAILED_PRECONDITION'],
});
