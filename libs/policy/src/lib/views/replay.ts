import type { ViewPolicy } from '@apphost/contracts';

/**
 * May a placeholder's initial call be re-run as a `refresh` (no warning)? Only when the profile's replay
 * classification says so: the tool's native name is listed in `policy.tools`, or the profile trusts read-only hints
 * (`policy.readOnlyHint`) and the declaration's `annotations.readOnlyHint` is exactly `true`. Otherwise `rerun`.
 */
export function isReplaySafe(policy: ViewPolicy['replay'], tool: { nativeName: string; annotations?: unknown }): boolean {
  if (policy.tools.includes(tool.nativeName)) return true;
  const annotations = tool.annotations;
  return (
    policy.readOnlyHint &&
    typeof annotations === 'object' &&
    annotations !== null &&
    !Array.isArray(annotations) &&
    (annotations as Record<string, unknown>)['readOnlyHint'] === true
  );
}
