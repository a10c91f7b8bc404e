import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { discoveredToolsetSchema } from '../binding-registry/discover-toolset.v1';
import { registryIdSchema } from '../binding-registry/registry-values';
import { boundToolHandleSchema, catalogAudienceSchema, toolNameSchema, toolsetSelectionSchema, unavailableToolsetSchema } from './catalog-values';

export const batchClassificationSchema = z.enum(['ui', 'non-ui', 'mixed']);

/**
 * `apphost.catalog-policy.classify-batch.v1`: fresh two-class discovery, then one immutable snapshot of the exact
 * handles the batch's calls (model names) resolve to. `mixed` is an answer (the caller rejects the batch before
 * fan-out); a call naming a tool that is absent, excluded or disagrees between classes fails the whole
 * classification (FAILED_PRECONDITION, `details.reason` TOOL_NOT_IN_CATALOG / TOOL_CLASS_DISAGREEMENT).
 *
 * Toolsets that could not be discovered are listed in `unavailable`. A call whose name is absent but may belong to
 * one of them (its name prefix matches, or the toolset has none) is not a classification failure: it is listed in
 * `unreachable` with the toolsets it may belong to, has no handle, and only that call fails.
 */
export const CatalogClassifyBatch = defineContract({
  service: 'catalog-policy',
  operation: 'classify-batch',
  version: 1,
  request: catalogAudienceSchema.extend({
    toolsets: z.array(toolsetSelectionSchema).min(1).max(32).optional(),
    calls: z
      .array(z.strictObject({ callId: z.string().min(1).max(128), name: toolNameSchema }))
      .min(1)
      .max(64),
  }),
  response: z.object({
    snapshotId: z.uuid(),
    /** `canonicalDigest`-style digest of the snapshot's handles, so an admitted batch can prove it used them. */
    snapshotDigest: z.string().regex(/^[0-9a-f]{64}$/),
    classification: batchClassificationSchema,
    calls: z.array(z.object({ callId: z.string(), name: toolNameSchema, uiAssociated: z.boolean(), handle: boundToolHandleSchema })),
    unavailable: z.array(unavailableToolsetSchema),
    unreachable: z.array(z.object({ callId: z.string(), name: toolNameSchema, toolsetIds: z.array(registryIdSchema).min(1) })),
    createdAt: z.string(),
    /**
     * The facts of each toolset a handle belongs to, read by the same registry request as its listings (binding
     * revision, profile, confirmation policy): the caller needs no `get-toolset` of its own. Absent from older answers.
     */
    toolsets: z.array(discoveredToolsetSchema).optional(),
  }),
  errors: ['FAILED_PRECONDITION', 'NOT_FOUND', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED'],
});
