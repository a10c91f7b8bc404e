import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { registryIdSchema, toolsetStatusSchema } from './registry-values';

/**
 * `apphost.binding-registry.rebind-toolset.v1`: install a new binding generation (the old one is revoked, never
 * reused), bound to `profileId` when given (another existing, immutable profile: how a policy is narrowed), else to
 * the toolset's current profile. An unknown toolset or profile is NOT_FOUND before any effect.
 */
export const rebindToolsetBodySchema = z.strictObject({ profileId: registryIdSchema.optional() });

export const RegistryRebindToolset = defineContract({
  service: 'binding-registry',
  operation: 'rebind-toolset',
  version: 1,
  request: z.strictObject({ toolsetId: registryIdSchema, ...rebindToolsetBodySchema.shape }),
  response: toolsetStatusSchema,
  errors: ['NOT_FOUND', 'CONFLICT'],
});
