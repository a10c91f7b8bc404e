import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { descriptorSealedResultRefSchema } from './values';

/** The most references one question may name (the sealed store asks one GC batch at a time, in slices of this). */
export const WHICH_REFERENCES_MAX = 500;

/** One sealed record as its store knows it: where it belongs and which function call it answers. */
export const sealedReferenceQuerySchema = z
  .object({
    session: sessionKeySchema,
    incarnation: incarnationSchema,
    functionCallId: z.string().min(1).max(128),
    recordId: descriptorSealedResultRefSchema.shape.recordId,
  })
  .strict();
export type SealedReferenceQuery = z.infer<typeof sealedReferenceQuerySchema>;

/**
 * `apphost.lifecycle-store.which-references-are-appended.v1`: the authoritative ledger's answer to "which of these
 * sealed records does a durable event reference?". A record is appended iff an event of exactly that session and
 * incarnation carries its record id for that function call (a widget descriptor's `sealedResultRef` or an entry of
 * `sealedResultRefs`); the answer names that event. Every other record is unreferenced: never appended, appended to
 * no event of that incarnation, or its events already removed by the deletion cascade. Read-only; any session state.
 */
export const LifecycleWhichReferencesAreAppended = defineContract({
  service: 'lifecycle-store',
  operation: 'which-references-are-appended',
  version: 1,
  request: z.object({ references: z.array(sealedReferenceQuerySchema).min(1).max(WHICH_REFERENCES_MAX) }).strict(),
  response: z
    .object({
      /** One entry per referenced record (in no particular order); records not listed are unreferenced. */
      appended: z.array(z.object({ recordId: z.string(), eventId: z.number().int().min(1) }).strict()),
    })
    .strict(),
  errors: ['INVALID_ARGUMENT'],
});
