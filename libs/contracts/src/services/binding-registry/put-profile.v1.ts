import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { hostProfileSchema, registryIdSchema } from './registry-values';

/** `apphost.binding-registry.put-profile.v1`: store an immutable host profile; same id + other content → CONFLICT. */
export const RegistryPutProfile = defineContract({
  service: 'binding-registry',
  operation: 'put-profile',
  version: 1,
  request: z.strictObject({ profileId: registryIdSchema, profile: hostProfileSchema }),
  response: z.object({ profileId: registryIdSchema, created: z.boolean(), fingerprint: z.string() }),
  errors: ['INVALID_ARGUMENT', 'CONFLICT'],
});
