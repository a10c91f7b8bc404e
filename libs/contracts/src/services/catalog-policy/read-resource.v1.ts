import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { boundGenerationSchema, resourcePolicySchema } from './catalog-values';

/**
 * `apphost.catalog-policy.read-resource.v1`: `resources/read` on a bound generation under a resource policy, on
 * both sides: the requested URI must match, and so must every returned content item (after canonicalization);
 * one disallowed item rejects the whole response (PERMISSION_DENIED, RESOURCE_POLICY_DENIED), as does an item or
 * the aggregate over the byte limits (PAYLOAD_TOO_LARGE). `textReferenceFromBytes` is passed to the owner
 * (`binding-registry.read-resource.v1`): large texts come back as `textReference`s, counted at their byte length.
 */
export const CatalogReadResource = defineContract({
  service: 'catalog-policy',
  operation: 'read-resource',
  version: 1,
  request: z.strictObject({
    generation: boundGenerationSchema,
    uri: z.string().min(1).max(2048),
    policy: resourcePolicySchema,
    textReferenceFromBytes: z.number().int().min(1).optional(),
    limits: z
      .strictObject({
        maxItemBytes: z
          .number()
          .int()
          .min(1)
          .max(8 * 1024 * 1024)
          .optional(),
        maxTotalBytes: z
          .number()
          .int()
          .min(1)
          .max(8 * 1024 * 1024)
          .optional(),
      })
      .optional(),
  }),
  response: z.object({
    /** Each item as the server returned it (a large text by reference, when asked), with its `uri` replaced by the canonical form. */
    contents: z.array(z.record(z.string(), z.unknown())),
    totalBytes: z.number().int().min(0),
    /** The server's cache hints (2026-07-28 results): how long the result may be reused, and for whom. */
    ttlMs: z.number().int().min(0).optional(),
    cacheScope: z.string().max(64).optional(),
  }),
  errors: ['PERMISSION_DENIED', 'PAYLOAD_TOO_LARGE', 'INVALID_ARGUMENT', 'FAILED_PRECONDITION', 'DEADLINE_EXCEEDED'],
});
