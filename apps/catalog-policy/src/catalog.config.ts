import { z } from 'zod';
import { toolsetSelectionSchema, type ToolsetSelection } from '@apphost/contracts';
import { jsonVariable, parseConfig } from '@apphost/runtime';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Framework-reserved tool names (ADK's): never in a model or app catalog, with or without a prefix. */
export const DEFAULT_RESERVED_NAMES = ['adk_request_credential', 'adk_request_confirmation', 'adk_request_input', 'transfer_to_agent'] as const;

export const catalogConfigSchema = z.object({
  /** Comma-separated reserved names (replaces the default list). */
  CATALOG_RESERVED_NAMES: z.string().optional(),
  /** TTL of the model-catalog cache (a selection's `cacheTtlMs` may only shorten it); 0 disables the cache. */
  CATALOG_MODEL_CACHE_TTL_MS: int(0, 3_600_000).default(30_000),
  CATALOG_MODEL_CACHE_MAX_ENTRIES: int(1, 100_000).default(1000),
  /** JSON `{ appName: ToolsetSelection[] }`: the developer selection of each agent app. */
  CATALOG_APP_TOOLSETS: jsonVariable(
    z.record(z.string(), z.array(toolsetSelectionSchema).max(32)),
    'must be a JSON object { appName: [{ toolsetId, toolFilter?, namePrefix?, cacheTtlMs? }] }',
  ).optional(),
  /** Timeout of registry requests (acquire, list); above the profile's discovery `maxTimeMs`. */
  CATALOG_REGISTRY_TIMEOUT_MS: int(100, 600_000).default(30_000),
  /** Hard cap on tools accepted from one listing (the registry enforces the profile's bounds first). */
  CATALOG_MAX_TOOLS: int(1, 100_000).default(10_000),
});

export interface CatalogConfig {
  reservedNames: readonly string[];
  modelCacheTtlMs: number;
  modelCacheMaxEntries: number;
  appToolsets: ReadonlyMap<string, ToolsetSelection[]>;
  registryTimeoutMs: number;
  maxTools: number;
}

/** The schema a service definition parses: the variables above, shaped into `CatalogConfig`. */
export const catalogConfig = catalogConfigSchema.transform((c): CatalogConfig => ({
  reservedNames: (c.CATALOG_RESERVED_NAMES === undefined
    ? [...DEFAULT_RESERVED_NAMES]
    : c.CATALOG_RESERVED_NAMES.split(',')
        .map((s) => s.trim())
        .filter(Boolean)
  ).map((n) => n.toLowerCase()),
  modelCacheTtlMs: c.CATALOG_MODEL_CACHE_TTL_MS,
  modelCacheMaxEntries: c.CATALOG_MODEL_CACHE_MAX_ENTRIES,
  appToolsets: new Map(Object.entries(c.CATALOG_APP_TOOLSETS ?? {})),
  registryTimeoutMs: c.CATALOG_REGISTRY_TIMEOUT_MS,
  maxTools: c.CATALOG_MAX_TOOLS,
}));

/** Parses catalog-policy's settings alone (tests); a service gets them in `context.config`. */
export function parseCatalogConfig(env: Record<string, string | undefined>): CatalogConfig {
  return parseConfig('catalog-policy', catalogConfig, env);
}
