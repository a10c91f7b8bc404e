import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { registryIdSchema, toolsetStatusSchema } from './registry-values';

/**
 * The toolset's current binding as the verdict was judged against it (read in the same statement): what a caller that
 * also needs the toolset's state, profile and binding generation would otherwise ask `get-toolset` for.
 */
export const verifiedBindingSchema = z.object({
  /** The toolset's current profile (a verify of a model-only toolset is refused, so never null here). */
  profileId: registryIdSchema,
  state: toolsetStatusSchema.shape.state,
  bindingGeneration: toolsetStatusSchema.shape.bindingGeneration,
  bindingRevision: toolsetStatusSchema.shape.bindingRevision,
});
export type VerifiedBinding = z.infer<typeof verifiedBindingSchema>;

/**
 * `apphost.binding-registry.verify-binding-revision.v1`: is this `bindingRevision` the current toolset binding's,
 * under a key still in its verify window? Unknown or retired keys fail closed (FAILED_PRECONDITION).
 */
export const RegistryVerifyBindingRevision = defineContract({
  service: 'binding-registry',
  operation: 'verify-binding-revision',
  version: 1,
  request: z.strictObject({ toolsetId: registryIdSchema, bindingRevision: z.string().min(1).max(256) }),
  response: z.object({
    valid: z.boolean(),
    keyId: z.string(),
    /** The signing key is still the ring's active key (false once a rotation made it a verify-only key). */
    active: z.boolean(),
    /** `valid` and the current binding is PROFILE_BOUND. */
    current: z.boolean(),
    /** The current binding the verdict was judged against. Absent from older answers. */
    binding: verifiedBindingSchema.optional(),
  }),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION', 'INVALID_ARGUMENT'],
});
