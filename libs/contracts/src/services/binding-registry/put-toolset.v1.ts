import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { registryIdSchema, toolsetSpecSchema, toolsetStatusSchema } from './registry-values';

/**
 * `apphost.binding-registry.put-toolset.v1`: store an immutable toolset spec and materialize its first binding.
 * Stdio specs are refused unless the deployment allows them (they run commands).
 */
export const RegistryPutToolset = defineContract({
  service: 'binding-registry',
  operation: 'put-toolset',
  version: 1,
  request: z.strictObject({ toolsetId: registryIdSchema, spec: toolsetSpecSchema }),
  response: z.object({ created: z.boolean(), status: toolsetStatusSchema }),
  errors: ['INVALID_ARGUMENT', 'CONFLICT', 'PERMISSION_DENIED', 'NOT_FOUND'],
});
