export type Visibility = 'model' | 'app';

const ALL: readonly Visibility[] = ['model', 'app'];

/**
 * Normalizes a tool's raw `_meta.ui.visibility`. Absent means both audiences (the spec's default); anything
 * malformed — not an array, a non-string, an unknown or differently-cased value — denies both, because a
 * typo must never widen who can call a tool. Callers log the deny-all case. Duplicates collapse.
 */
export function normalizeVisibility(visibility: unknown): Visibility[] {
  if (visibility === undefined) return [...ALL];
  if (!Array.isArray(visibility)) return [];
  const seen = new Set<Visibility>();
  for (const entry of visibility) {
    if (entry !== 'model' && entry !== 'app') return [];
    seen.add(entry);
  }
  return ALL.filter((v) => seen.has(v));
}

export function isMalformedVisibility(visibility: unknown): boolean {
  return visibility !== undefined && normalizeVisibility(visibility).length === 0 && !(Array.isArray(visibility) && visibility.length === 0);
}
