import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { acquirePrincipalSchema, acquireSessionSchema, connectionClassSchema, generationHandleSchema, registryIdSchema } from './registry-values';

/**
 * `apphost.binding-registry.acquire-generation.v1`: the live connection generation for (toolset, binding
 * generation, class, security domain of the principal, session incarnation), claimed and opened if there is
 * none, with one reference held for the caller. Every later operation goes to `conn.<ownerInstanceId>`.
 */
export const RegistryAcquireGeneration = defineContract({
  service: 'binding-registry',
  operation: 'acquire-generation',
  version: 1,
  request: z.strictObject({
    toolsetId: registryIdSchema,
    connectionClass: connectionClassSchema,
    principal: acquirePrincipalSchema,
    session: acquireSessionSchema.optional(),
    holder: z.strictObject({ kind: z.enum(['view', 'reservation', 'operation', 'runner']), id: z.string().min(1).max(128) }),
  }),
  response: generationHandleSchema,
  /** RESOURCE_EXHAUSTED (`LIVE_GENERATIONS_EXHAUSTED`, retryable): the replica serving it holds its cap of live generations. */
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION', 'UNAVAILABLE', 'DEADLINE_EXCEEDED', 'RESOURCE_EXHAUSTED'],
});
