import { canonicalizeUri } from './uri';

export interface ResourcePolicy {
  exact?: string[];
  prefixes?: string[];
}

function tryCanonicalize(uri: string): string | undefined {
  try {
    return canonicalizeUri(uri);
  } catch {
    return undefined;
  }
}

/**
 * Deny by default. Both sides are canonicalized; a URI (or policy entry) that fails canonicalization never
 * matches. A prefix matches only on a path-segment boundary: `ui://a/w` covers `ui://a/w` and `ui://a/w/x`,
 * never `ui://a/w-evil`, and a prefix carrying a query never matches anything but itself. A prefix that is a bare
 * scheme (`ui://`: "every ui:// resource") matches every canonical URI of that scheme.
 */
/** `<scheme>://` and nothing else. */
const BARE_SCHEME = /^([a-z][a-z0-9+.-]*):\/\/$/i;

export function matchResourcePolicy(policy: ResourcePolicy, uri: string): boolean {
  const candidate = tryCanonicalize(uri);
  if (candidate === undefined) return false;
  for (const entry of policy.exact ?? []) {
    if (tryCanonicalize(entry) === candidate) return true;
  }
  for (const entry of policy.prefixes ?? []) {
    const scheme = BARE_SCHEME.exec(entry)?.[1];
    if (scheme !== undefined && candidate.toLowerCase().startsWith(`${scheme.toLowerCase()}://`)) return true;
    const prefix = tryCanonicalize(entry);
    if (prefix === undefined) continue;
    if (candidate === prefix) return true;
    if (prefix.includes('?')) continue;
    const bounded = prefix.endsWith('/') ? prefix : `${prefix}/`;
    if (candidate.startsWith(bounded)) return true;
  }
  return false;
}
