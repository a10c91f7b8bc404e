import { z } from 'zod';
import { defineContract } from '../../lib/contract';

export const keyRingStatusSchema = z.object({
  activeKeyId: z.string(),
  verifyingKeyIds: z.array(z.string()),
  retiredKeyIds: z.array(z.string()),
});

/** `apphost.binding-registry.rotate-keys.v1`: a new signing key; the old one verifies for a bounded window. Key ids only, never material. */
export const RegistryRotateKeys = defineContract({
  service: 'binding-registry',
  operation: 'rotate-keys',
  version: 1,
  request: z.strictObject({}),
  response: keyRingStatusSchema,
  errors: ['CONFLICT'],
});
