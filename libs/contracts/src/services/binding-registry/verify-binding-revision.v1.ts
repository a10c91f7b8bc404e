import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { registryIdSchema } from './registry-values';

/**
 * `apphost.binding-registry.verify-binding-revision.v1`: is this `bindingRevision` the current toolset binding's,
 * under a key still in its verify window? Unknown or retired keys fail closed (FAILED_PRECONDITION).
 */
export const RegistryVerifyBindingRevision = defineContract({
  service: 'binding-registry',
  operation: 'verify-binding-revision',
  version: 1,
  request: z.strictObject({ toolsetId: registryIdSchema, bindingRevision: z.string().min(1).max(256) }),
  /** `active`: the signing key is still the ring's active key (false once a rotation made it a verify-only key). */
  response: z.object({ valid: z.boolean(), keyId: z.string(), active: z.boolean(), current: z.boolean() }),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION', 'INVALID_ARGUMENT'],
});
