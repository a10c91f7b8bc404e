import { buildViewCsp } from '@apphost/policy';

/** Longest CSP header the sandbox accepts (the builder's output for a generous declaration stays far below). */
export const MAX_SANDBOX_CSP_LENGTH = 16_384;

/**
 * The CSP the sandbox serves a View with, or undefined when `header` is not one the bootstrap's builder
 * (`buildViewCsp`) produces. The declared origins are read back out of the header and the policy rebuilt from them:
 * only an exact match is served, so a header can name domains but never add a keyword, a wildcard, a directive or a
 * looser base. No header at all is the spec default (nothing declared).
 */
export function sandboxCspOf(header: string | undefined, options: { development: boolean }): string | undefined {
  if (header === undefined) return buildViewCsp(undefined, options).header;
  if (header.length > MAX_SANDBOX_CSP_LENGTH) return undefined;
  const directives = new Map<string, string[]>();
  for (const part of header.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (!name || directives.has(name)) return undefined;
    directives.set(name, sources);
  }
  const origins = (name: string, keywords: string[]) => (directives.get(name) ?? []).filter((source) => !keywords.includes(source));
  const declared = {
    connectDomains: origins('connect-src', ["'none'"]),
    resourceDomains: origins('script-src', ["'self'", "'unsafe-inline'", 'data:']),
    frameDomains: origins('frame-src', ["'none'"]),
    baseUriDomains: origins('base-uri', ["'self'"]),
  };
  const rebuilt = buildViewCsp(declared, options);
  return rebuilt.rejected.length === 0 && rebuilt.header === header ? header : undefined;
}
