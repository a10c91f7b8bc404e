import { defineReasons, type ReasonOf } from '../../lib/errors';

/** Every `details.reason` catalog-policy raises (errors of the registry and connections it relays keep theirs). */
export const CatalogReasons = defineReasons([
  'TOOL_NOT_IN_CATALOG',
  'TOOL_CLASS_DISAGREEMENT',
  'BINDING_CHANGED_DURING_DISCOVERY',
  'DISCOVERY_MAX_ITEMS',
  'DISCOVERY_FAILED',
  'TOOL_NOT_PINNED',
  'FINGERPRINT_NOT_CANDIDATE',
  'RESOURCE_POLICY_DENIED',
  'READ_ITEM_TOO_LARGE',
  'READ_TOTAL_TOO_LARGE',
]);
export type CatalogReason = ReasonOf<typeof CatalogReasons>;
