import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { registryIdSchema, toolsetStatusSchema } from './registry-values';

/** `apphost.binding-registry.rebind-toolset.v1`: install a new binding generation (the old one is revoked, never reused). */
export const RegistryRebindToolset = defineContract({
  service: 'binding-registry',
  operation: 'rebind-toolset',
  version: 1,
  request: z.strictObject({ toolsetId: registryIdSchema }),
  response: toolsetStatusSchema,
  errors: ['NOT_FOUND'],
});
