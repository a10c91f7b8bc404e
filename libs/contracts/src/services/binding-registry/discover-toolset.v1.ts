import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { listedToolSchema } from './connection-ops.v1';
import {
  acquirePrincipalSchema,
  acquireSessionSchema,
  connectionClassSchema,
  generationHandleSchema,
  registryIdSchema,
  toolsetStatusSchema,
} from './registry-values';

/** What a discovery read of the toolset at the same moment as its binding: the facts admission needs, no live counts. */
export const discoveredToolsetSchema = toolsetStatusSchema.pick({
  toolsetId: true,
  profileId: true,
  state: true,
  bindingGeneration: true,
  bindingRevision: true,
  requireConfirmation: true,
  selection: true,
});
export type DiscoveredToolset = z.infer<typeof discoveredToolsetSchema>;

/**
 * `apphost.binding-registry.discover-toolset.v1`: catalog discovery of one toolset in one request — what
 * `acquire-generation`, `list-tools` and `release` do per class, plus the toolset's facts (`get-toolset` without the
 * live count), all read by the replica serving it. For each class asked for: the live generation of (toolset,
 * current binding generation, class, security domain of the principal, session incarnation), claimed and opened if
 * there is none, a reference held while its owner lists it fresh and fully paginated (the profile's discovery
 * bounds), then released; the generation stays addressable by its handle. Two classes served by one connection (a
 * profile that grants no callbacks) are listed once: `classes[i].listing` indexes `listings`.
 *
 * All or nothing: a class that cannot be acquired or listed fails the request with that class's error (the first
 * class asked for when several fail), as an `acquire-generation` or `list-tools` would.
 */
export const RegistryDiscoverToolset = defineContract({
  service: 'binding-registry',
  operation: 'discover-toolset',
  version: 1,
  request: z.strictObject({
    toolsetId: registryIdSchema,
    connectionClasses: z.array(connectionClassSchema).min(1).max(2),
    principal: acquirePrincipalSchema,
    session: acquireSessionSchema.optional(),
    holder: z.strictObject({ kind: z.enum(['view', 'reservation', 'operation', 'runner']), id: z.string().min(1).max(128) }),
  }),
  response: z.object({
    toolset: discoveredToolsetSchema,
    /** In the order asked for; `generation.connectionClass` is the class asked for, even when app-safe serves it. */
    classes: z.array(z.object({ generation: generationHandleSchema.omit({ leaseId: true }), listing: z.number().int().min(0) })),
    listings: z.array(z.object({ tools: z.array(listedToolSchema), pages: z.number().int(), bytes: z.number().int() })),
  }),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION', 'UNAVAILABLE', 'DEADLINE_EXCEEDED', 'RESOURCE_EXHAUSTED'],
});
