import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { registryIdSchema, toolsetStatusSchema } from './registry-values';

/**
 * `apphost.binding-registry.revoke-toolset.v1`: REVOKING → CLOSED for the current binding generation; every
 * connection that advertised the extension is closed. Idempotent.
 */
export const RegistryRevokeToolset = defineContract({
  service: 'binding-registry',
  operation: 'revoke-toolset',
  version: 1,
  request: z.strictObject({ toolsetId: registryIdSchema }),
  response: toolsetStatusSchema,
  errors: ['NOT_FOUND'],
});
