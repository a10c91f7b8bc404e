import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { connectionClassSchema, registryIdSchema } from '../binding-registry/registry-values';
import { toolNameSchema } from './catalog-values';

const fingerprintSchema = z.string().regex(/^[0-9a-f]{64}$/);

/** A tool-definition pin: one per toolset, connection class and native tool name. */
export const toolPinSchema = z.object({
  toolsetId: registryIdSchema,
  connectionClass: connectionClassSchema,
  name: toolNameSchema,
  state: z.enum(['APPROVED', 'QUARANTINED']),
  approvedFingerprint: fingerprintSchema,
  /** The drifted definition waiting for approval (null when APPROVED). */
  candidateFingerprint: fingerprintSchema.nullable(),
  updatedAt: z.string(),
});
export type ToolPin = z.infer<typeof toolPinSchema>;

/**
 * `apphost.catalog-policy.approve-tool.v1`: an admin approves the quarantined definition of a tool on every class
 * where it is quarantined. `fingerprint`, when given, must be a current candidate's (CONFLICT otherwise), so an
 * approval never covers a definition the admin did not review. A tool never seen is NOT_FOUND; approving a tool
 * with nothing quarantined changes nothing (`approved` is empty).
 */
export const CatalogApproveTool = defineContract({
  service: 'catalog-policy',
  operation: 'approve-tool',
  version: 1,
  request: z.strictObject({
    toolsetId: registryIdSchema,
    name: toolNameSchema,
    fingerprint: fingerprintSchema.optional(),
    approvedBy: z.string().min(1).max(256),
  }),
  response: z.object({
    pins: z.array(toolPinSchema),
    approved: z.array(z.object({ connectionClass: connectionClassSchema, previousFingerprint: fingerprintSchema, fingerprint: fingerprintSchema })),
  }),
  errors: ['NOT_FOUND', 'CONFLICT'],
});
