import { DEFAULT_DISCOVERY_BOUNDS, DEFAULT_MRTR_LIMITS, type DiscoveryBounds, type MrtrLimits } from '@apphost/mcp';
import type { HostProfile } from '@apphost/contracts';

/** What governs one live generation, taken from its profile (defaults for model-only toolsets without one). */
export interface GenerationPolicy {
  discovery: DiscoveryBounds;
  mrtr: MrtrLimits;
  callTimeoutMs: number;
  readTimeoutMs: number;
  idleEvictMs: number;
  maxLifetimeMs: number;
}

export const DEFAULT_GENERATION_POLICY: GenerationPolicy = {
  discovery: DEFAULT_DISCOVERY_BOUNDS,
  mrtr: DEFAULT_MRTR_LIMITS,
  callTimeoutMs: 60_000,
  readTimeoutMs: 30_000,
  idleEvictMs: 5 * 60_000,
  maxLifetimeMs: 8 * 3600_000,
};

export function policyOf(profile: HostProfile | undefined): GenerationPolicy {
  if (!profile) return DEFAULT_GENERATION_POLICY;
  return {
    discovery: profile.limits.discovery,
    mrtr: profile.limits.mrtr,
    callTimeoutMs: profile.limits.callTimeoutMs,
    readTimeoutMs: profile.limits.readTimeoutMs,
    idleEvictMs: profile.connectionPolicy.idleEvictMs,
    maxLifetimeMs: profile.connectionPolicy.maxLifetimeMs,
  };
}

/**
 * True when the profile grants the model path no callback at all (no sampling, elicitation or roots): then a `full`
 * connection could do nothing an `app-safe` one cannot, so both classes of a session and toolset share the one
 * app-safe connection (one server process). Without a profile nothing is granted or denied explicitly: two connections.
 */
export function sharesOneConnection(profile: HostProfile | undefined): boolean {
  if (!profile) return false;
  const { sampling, elicitation, roots } = profile.callbackPolicy;
  return sampling === 'deny' && elicitation === 'deny' && roots === 'deny';
}
