import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { appCallPolicySchema, boundGenerationSchema, boundToolHandleSchema, exclusionSchema } from './catalog-values';

/**
 * `apphost.catalog-policy.app-catalog.v1`: app-call policy ∩ `app` visibility ∩ the View's bound generation,
 * native names. Always a fresh, fully paginated listing on exactly that generation (never the cache); any
 * discovery bound violation or listing failure denies: there is no partial catalog.
 */
export const CatalogAppCatalog = defineContract({
  service: 'catalog-policy',
  operation: 'app-catalog',
  version: 1,
  request: z.strictObject({ generation: boundGenerationSchema, policy: appCallPolicySchema.default({ mode: 'all-app-visible' }) }),
  response: z.object({ tools: z.array(boundToolHandleSchema), excluded: z.array(exclusionSchema) }),
  errors: ['FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED'],
});
