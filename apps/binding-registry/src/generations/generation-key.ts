import { createHash } from 'node:crypto';
import { canonicalize } from '@apphost/canonical-json';
import type { Principal, SessionKey } from '@apphost/contracts';

export const SECURITY_DOMAIN_PURPOSE = 'security-domain';

/** The principal as the security domain sees it: tenant and subject (scopes do not change who it is). */
export function principalIdentity(principal: Principal): string {
  return canonicalize({ tenant: principal.tenant, subject: principal.subject });
}

export interface GenerationKeyParts {
  toolsetId: string;
  bindingGeneration: number;
  connectionClass: 'app-safe' | 'full';
  /** HMAC of the principal under a host key: never the principal itself. */
  securityDomain: string;
  /** Stateful transports (stdio, stateful HTTP) key on the session incarnation unless the profile opts out. */
  session: { key: SessionKey; incarnation: number } | null;
}

/** The directory key of a connection generation: a digest, so no raw session or principal data is stored or logged. */
export function generationKey(parts: GenerationKeyParts): string {
  return createHash('sha256').update('apphost.generation-key.v1\n').update(canonicalize(parts)).digest('hex');
}
