import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { hostProfileSchema, registryIdSchema } from './registry-values';

/** `apphost.binding-registry.get-profile.v1`: a stored (immutable) host profile. */
export const RegistryGetProfile = defineContract({
  service: 'binding-registry',
  operation: 'get-profile',
  version: 1,
  request: z.strictObject({ profileId: registryIdSchema }),
  response: z.strictObject({ profileId: registryIdSchema, profile: hostProfileSchema }),
  errors: ['NOT_FOUND'],
});
