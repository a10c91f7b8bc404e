import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { registryIdSchema } from '../binding-registry/registry-values';
import { toolPinSchema } from './approve-tool.v1';

/** `apphost.catalog-policy.list-pins.v1`: the pins of a toolset (admin view, tests). */
export const CatalogListPins = defineContract({
  service: 'catalog-policy',
  operation: 'list-pins',
  version: 1,
  request: z.strictObject({ toolsetId: registryIdSchema }),
  response: z.object({ pins: z.array(toolPinSchema) }),
  errors: [],
});
