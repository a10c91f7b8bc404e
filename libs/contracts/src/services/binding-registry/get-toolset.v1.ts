import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { registryIdSchema, toolsetStatusSchema } from './registry-values';

/** `apphost.binding-registry.get-toolset.v1`: state, binding generation and readiness per provider. */
export const RegistryGetToolset = defineContract({
  service: 'binding-registry',
  operation: 'get-toolset',
  version: 1,
  request: z.strictObject({ toolsetId: registryIdSchema }),
  response: toolsetStatusSchema,
  errors: ['NOT_FOUND'],
});
