/**
 * Canonical form of a web origin, `scheme://host[:port]`, so allowlist entries and `Origin` headers compare
 * exactly: WHATWG URL lowercases scheme and host and drops default ports. Returns undefined for anything that
 * is not a bare http(s) origin (paths, credentials, the opaque "null" origin, garbage).
 */
export function normalizeOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return undefined;
  return url.origin;
}
