/**
 * The document's `_meta.ui`: MCP Apps hosts check both locations, preferring the `resources/read` content item and
 * falling back to the listing entry. Both arguments are `_meta.ui` values (not whole `_meta` objects); a value that is
 * not an object counts as absent. Merged per top-level key, the item's winning (its `csp` replaces the listing's
 * whole `csp`, never merged into it, so a listing cannot widen the item's CSP). A new object; inputs are not mutated.
 */
export function documentUiMeta(itemMeta: unknown, listingMeta: unknown): Record<string, unknown> {
  return { ...asRecord(listingMeta), ...asRecord(itemMeta) };
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
