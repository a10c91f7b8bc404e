import { z } from 'zod';
import { jsonVariable, parseConfig } from '@apphost/runtime';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const stdioAllowEntrySchema = z.strictObject({
  command: z.string().min(1).max(1024),
  args: z.array(z.string().max(4096)).max(64).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).max(1024).optional(),
});
export type StdioAllowEntry = z.infer<typeof stdioAllowEntrySchema>;

/** Settings of the binding registry, read once at startup. Key material and secrets are never logged. */
export const registryConfigSchema = z.object({
  /** Stdio toolset specs run commands on this host: refused unless the deployment opts in. */
  REGISTRY_ALLOW_STDIO: bool.default(false),
  /**
   * JSON array of stdio connections allowed even when REGISTRY_ALLOW_STDIO is false, each matched exactly (command,
   * args, env, cwd): the all-in-one plane's demo allows just the example servers this way.
   */
  REGISTRY_STDIO_ALLOWLIST: jsonVariable(z.array(stdioAllowEntrySchema).max(64), 'must be a JSON array of { command, args?, env?, cwd? }').optional(),
  /** Base64 of at least 32 bytes: wraps the key ring at rest (AES-256-GCM). Unset: development only, stored unwrapped. */
  REGISTRY_HOST_KEY: z.string().min(44).optional(),
  /** How long a rotated-out key still verifies binding revisions. */
  REGISTRY_KEY_VERIFY_WINDOW_MS: int(0, 30 * 24 * 3600 * 1000).default(24 * 3600 * 1000),
  /** The ownership lease of this instance: other replicas take over its generations only after it lapses. */
  REGISTRY_INSTANCE_LEASE_MS: int(1000, 600_000).default(15_000),
  /**
   * How long a binding construction may take before another attempt takes it over (its constructor is presumed
   * dead). Below the 10 s a caller waits for a construction, so a waiter outlives a dead constructor's lease.
   */
  REGISTRY_CONSTRUCTION_LEASE_MS: int(500, 9_000).default(5_000),
  REGISTRY_CONNECT_TIMEOUT_MS: int(100, 600_000).default(20_000),
  /** Live connection generations (each may be a server process) this instance holds at most; beyond it acquire is RESOURCE_EXHAUSTED. */
  REGISTRY_MAX_LIVE_GENERATIONS: int(1, 100_000).default(64),
  REGISTRY_PROVIDER_TIMEOUT_MS: int(50, 60_000).default(1500),
  /** JSON object name → value: the secrets header references of HTTP toolsets resolve against. */
  REGISTRY_SECRETS: jsonVariable(z.record(z.string(), z.string()), 'must be a JSON object of strings')
    .transform((record): ReadonlyMap<string, string> => new Map(Object.entries(record)))
    .optional(),
});

export interface RegistryConfig {
  allowStdio: boolean;
  /** Stdio connections allowed one by one when `allowStdio` is false. */
  stdioAllowlist: readonly StdioAllowEntry[];
  hostKey: Buffer | undefined;
  keyVerifyWindowMs: number;
  instanceLeaseMs: number;
  constructionLeaseMs: number;
  connectTimeoutMs: number;
  maxLiveGenerations: number;
  providerTimeoutMs: number;
  secrets: ReadonlyMap<string, string>;
}

/** The schema a service definition parses: the variables above, checked and shaped into `RegistryConfig`. */
export const registryConfig = registryConfigSchema.transform((c, ctx): RegistryConfig => {
  const hostKey = c.REGISTRY_HOST_KEY === undefined ? undefined : Buffer.from(c.REGISTRY_HOST_KEY, 'base64');
  if (hostKey && hostKey.length < 32) ctx.addIssue({ code: 'custom', path: ['REGISTRY_HOST_KEY'], message: 'must decode to at least 32 bytes' });
  // A construction is bounded by its provider probes (run in parallel): a shorter lease would be taken over while it runs.
  if (c.REGISTRY_CONSTRUCTION_LEASE_MS <= c.REGISTRY_PROVIDER_TIMEOUT_MS)
    ctx.addIssue({ code: 'custom', path: ['REGISTRY_CONSTRUCTION_LEASE_MS'], message: 'must exceed REGISTRY_PROVIDER_TIMEOUT_MS' });
  return {
    allowStdio: c.REGISTRY_ALLOW_STDIO,
    stdioAllowlist: c.REGISTRY_STDIO_ALLOWLIST ?? [],
    hostKey,
    keyVerifyWindowMs: c.REGISTRY_KEY_VERIFY_WINDOW_MS,
    instanceLeaseMs: c.REGISTRY_INSTANCE_LEASE_MS,
    constructionLeaseMs: c.REGISTRY_CONSTRUCTION_LEASE_MS,
    connectTimeoutMs: c.REGISTRY_CONNECT_TIMEOUT_MS,
    maxLiveGenerations: c.REGISTRY_MAX_LIVE_GENERATIONS,
    providerTimeoutMs: c.REGISTRY_PROVIDER_TIMEOUT_MS,
    secrets: c.REGISTRY_SECRETS ?? new Map(),
  };
});

/** Parses the registry's settings alone (tests); a service gets them in `context.config`. */
export function parseRegistryConfig(env: Record<string, string | undefined>): RegistryConfig {
  return parseConfig('binding-registry', registryConfig, env);
}
