import { z } from 'zod';
import { defineContract } from '../../lib/contract';

export const sealedGcRequestSchema = z.strictObject({
  /** At most this many records per call (default: the store's configured batch). */
  limit: z.number().int().min(1).max(100_000).optional(),
});
export const sealedGcResponseSchema = z.strictObject({
  deletedRecords: z.number().int().min(0),
  /** Expired PENDING records an appended event references: committed to that event instead of deleted. */
  committedRecords: z.number().int().min(0),
  deletedUploads: z.number().int().min(0),
});

/**
 * `apphost.sealed-result-store.gc.v1`: one guarded pass of the collector (it also runs on a timer). It asks the
 * authoritative ledger (`lifecycle-store.which-references-are-appended.v1`) about the PENDING records past their
 * TTL, commits those an event references, and deletes only the others (and those of a fenced incarnation), plus
 * expired staged uploads. When the ledger cannot answer: UNAVAILABLE (`LEDGER_UNAVAILABLE`), no record deleted.
 */
export const SealedGc = defineContract({
  service: 'sealed-result-store',
  operation: 'gc',
  version: 1,
  request: sealedGcRequestSchema,
  response: sealedGcResponseSchema,
  errors: ['INVALID_ARGUMENT', 'UNAVAILABLE'],
});
