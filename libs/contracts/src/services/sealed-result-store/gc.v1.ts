import { z } from 'zod';
import { defineContract } from '../../lib/contract';

export const sealedGcRequestSchema = z.strictObject({
  /** At most this many records per call (default: the store's configured batch). */
  limit: z.number().int().min(1).max(100_000).optional(),
});
export const sealedGcResponseSchema = z.strictObject({
  deletedRecords: z.number().int().min(0),
  deletedUploads: z.number().int().min(0),
});

/**
 * `apphost.sealed-result-store.gc.v1`: one guarded pass of the collector (it also runs on a timer): deletes only
 * PENDING records past their TTL that no commit bound to an event, and expired staged uploads.
 */
export const SealedGc = defineContract({
  service: 'sealed-result-store',
  operation: 'gc',
  version: 1,
  request: sealedGcRequestSchema,
  response: sealedGcResponseSchema,
  errors: ['INVALID_ARGUMENT'],
});
