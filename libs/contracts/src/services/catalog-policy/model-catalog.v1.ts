import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { boundToolHandleSchema, catalogAudienceSchema, exclusionSchema, toolsetSelectionSchema, unavailableToolsetSchema } from './catalog-values';

/**
 * `apphost.catalog-policy.model-catalog.v1`: developer selection ∩ `model` visibility, prefixed names, reserved
 * names and quarantined tools excluded. Two-class discovery (app-safe first, then full) through the registry;
 * UI tools are bound to the app-safe generation, others to the full one. `toolsets` absent: the app's configured
 * selection (`CATALOG_APP_TOOLSETS`). May be served from a TTL cache (`fresh: true` bypasses it).
 *
 * One toolset that cannot be discovered never fails the catalog: its tools are absent and it is listed in
 * `unavailable` (empty when every toolset answered; every toolset unavailable is still an answer, with no tools). A
 * catalog with unavailable toolsets is never cached, so the next request tries them again.
 */
export const CatalogModelCatalog = defineContract({
  service: 'catalog-policy',
  operation: 'model-catalog',
  version: 1,
  request: catalogAudienceSchema.extend({ toolsets: z.array(toolsetSelectionSchema).min(1).max(32).optional(), fresh: z.boolean().default(false) }),
  response: z.object({
    tools: z.array(boundToolHandleSchema),
    excluded: z.array(exclusionSchema),
    unavailable: z.array(unavailableToolsetSchema),
    cached: z.boolean(),
    composedAt: z.string(),
  }),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED', 'INVALID_ARGUMENT'],
});
