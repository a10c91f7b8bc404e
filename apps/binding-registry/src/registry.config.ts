import { z } from 'zod';
import { parseConfig } from '@apphost/runtime';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** Settings of the binding registry, read once at startup. Key material and secrets are never logged. */
export const registryConfigSchema = z.object({
  /** Stdio toolset specs run commands on this host: refused unless the deployment opts in. */
  REGISTRY_ALLOW_STDIO: bool.default(false),
  /** Base64 of at least 32 bytes: wraps the key ring at rest (AES-256-GCM). Unset: development only, stored unwrapped. */
  REGISTRY_HOST_KEY: z.string().min(44).optional(),
  /** How long a rotated-out key still verifies binding revisions. */
  REGISTRY_KEY_VERIFY_WINDOW_MS: int(0, 30 * 24 * 3600 * 1000).default(24 * 3600 * 1000),
  /** The ownership lease of this instance: other replicas take over its generations only after it lapses. */
  REGISTRY_INSTANCE_LEASE_MS: int(1000, 600_000).default(15_000),
  REGISTRY_CONNECT_TIMEOUT_MS: int(100, 600_000).default(20_000),
  REGISTRY_PROVIDER_TIMEOUT_MS: int(50, 60_000).default(1500),
  /** JSON object name → value: the secrets header references of HTTP toolsets resolve against. */
  REGISTRY_SECRETS: z.string().optional(),
});

export interface RegistryConfig {
  allowStdio: boolean;
  hostKey: Buffer | undefined;
  keyVerifyWindowMs: number;
  instanceLeaseMs: number;
  connectTimeoutMs: number;
  providerTimeoutMs: number;
  secrets: ReadonlyMap<string, string>;
}

export function parseRegistryConfig(env: Record<string, string | undefined>): RegistryConfig {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const c = parseConfig('binding-registry', registryConfigSchema, clean);
  const hostKey = c.REGISTRY_HOST_KEY === undefined ? undefined : Buffer.from(c.REGISTRY_HOST_KEY, 'base64');
  if (hostKey && hostKey.length < 32) throw new Error('binding-registry: REGISTRY_HOST_KEY must decode to at least 32 bytes');
  let secrets = new Map<string, string>();
  if (c.REGISTRY_SECRETS) {
    const parsed = z.record(z.string(), z.string()).safeParse(safeJson(c.REGISTRY_SECRETS));
    if (!parsed.success) throw new Error('binding-registry: REGISTRY_SECRETS must be a JSON object of strings');
    secrets = new Map(Object.entries(parsed.data));
  }
  return {
    allowStdio: c.REGISTRY_ALLOW_STDIO,
    hostKey,
    keyVerifyWindowMs: c.REGISTRY_KEY_VERIFY_WINDOW_MS,
    instanceLeaseMs: c.REGISTRY_INSTANCE_LEASE_MS,
    connectTimeoutMs: c.REGISTRY_CONNECT_TIMEOUT_MS,
    providerTimeoutMs: c.REGISTRY_PROVIDER_TIMEOUT_MS,
    secrets,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
