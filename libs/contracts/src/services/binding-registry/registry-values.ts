import { z } from 'zod';
import { incarnationSchema, instanceIdSchema, principalSchema, serviceNameSchema, sessionKeySchema } from '../../lib/values';
import { exportPolicySchema } from '../export-audit/export-values';

/** Profile and toolset ids: one NATS-safe token, stable across restarts. */
export const registryIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'id: 1-64 chars of [A-Za-z0-9_-]');

export const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/** A provider the profile depends on: the service that must answer `describe`, with the store identity it must report. */
export const providerRefSchema = z.strictObject({
  service: serviceNameSchema,
  namespace: z.string().min(1).max(128).optional(),
  revision: z.string().min(1).max(64).optional(),
});
export type ProviderRef = z.infer<typeof providerRefSchema>;

export const PROVIDER_KINDS = ['principalResolver', 'sessionAuthorizer', 'keyProvider', 'sealedResultStore', 'lifecycleStore', 'exportAuditStore'] as const;
export const providerKindSchema = z.enum(PROVIDER_KINDS);
export type ProviderKind = z.infer<typeof providerKindSchema>;

const modalitiesSchema = z.strictObject({
  text: z.boolean().optional(),
  image: z.boolean().optional(),
  audio: z.boolean().optional(),
  resource: z.boolean().optional(),
  resourceLink: z.boolean().optional(),
  structuredContent: z.boolean().optional(),
});
const positiveMs = (max: number) => z.number().int().min(1).max(max);
const revisionSchema = z.string().min(1).max(64);

/** `McpAppsHostProfile`: immutable once stored; a change is a new profile id. */
export const hostProfileSchema = z.strictObject({
  extension: z.strictObject({
    mimeTypes: z
      .array(z.string().min(1).max(128))
      .min(1)
      .max(8)
      .refine((m) => m.includes(APP_MIME_TYPE), `mimeTypes must include ${APP_MIME_TYPE}`),
  }),
  hostCapabilities: z.strictObject({
    openLinks: z.boolean(),
    serverTools: z.boolean(),
    serverResources: z.boolean(),
    logging: z.boolean(),
    message: modalitiesSchema.optional(),
    updateModelContext: modalitiesSchema.optional(),
  }),
  renderer: z.strictObject({ id: z.string().min(1).max(128), version: z.string().min(1).max(64) }),
  providers: z.strictObject({
    principalResolver: providerRefSchema,
    sessionAuthorizer: providerRefSchema,
    keyProvider: providerRefSchema,
    sealedResultStore: providerRefSchema,
    lifecycleStore: providerRefSchema,
    exportAuditStore: providerRefSchema,
  }),
  replayClassification: z.strictObject({ source: z.string().min(1).max(128), revision: revisionSchema }),
  /** App-path callbacks are never offered (app-safe connections); the model path may take elicitation rounds. */
  callbackPolicy: z.strictObject({
    sampling: z.literal('deny'),
    elicitation: z.enum(['deny', 'model-only']),
    roots: z.literal('deny'),
    /** `ui/message` from a View: `accept` (a turn starts) or `confirm` (the user confirms first). Default `confirm`. */
    message: z.enum(['accept', 'confirm']).optional(),
    /** `ui/notifications/request-teardown`: `host-page` (recorded; the host page decides) or `accept` (the View is torn down). Default `host-page`. */
    requestTeardown: z.enum(['host-page', 'accept']).optional(),
  }),
  connectionPolicy: z.strictObject({
    /** `per-session` (default): stateful generations also key on the session incarnation. */
    affinity: z.enum(['per-session', 'per-principal']),
    idleEvictMs: positiveMs(24 * 3600 * 1000),
    maxLifetimeMs: positiveMs(7 * 24 * 3600 * 1000),
  }),
  resourcePolicy: z.strictObject({
    revision: revisionSchema,
    entries: z.array(z.strictObject({ match: z.enum(['exact', 'prefix']), uri: z.string().min(1).max(2048) })).max(256),
  }),
  limits: z.strictObject({
    revision: revisionSchema,
    discovery: z.strictObject({
      maxPages: z.number().int().min(1).max(1000),
      maxItems: z.number().int().min(1).max(100_000),
      maxBytes: z
        .number()
        .int()
        .min(1024)
        .max(64 * 1024 * 1024),
      maxTimeMs: positiveMs(600_000),
    }),
    mrtr: z.strictObject({ maxRounds: z.number().int().min(1).max(32), maxTotalMs: positiveMs(3_600_000) }),
    callTimeoutMs: positiveMs(600_000),
    readTimeoutMs: positiveMs(600_000),
  }),
  /** Export policy (absent: `DEFAULT_EXPORT_POLICY`, content only); export-audit reads it again at the recheck before release. */
  export: exportPolicySchema.optional(),
  /** View lease and document limits (absent: `VIEW_POLICY_DEFAULTS.views`). */
  views: z
    .strictObject({
      leaseMs: positiveMs(24 * 3600 * 1000).optional(),
      maxDocumentBytes: z
        .number()
        .int()
        .min(1024)
        .max(32 * 1024 * 1024)
        .optional(),
    })
    .optional(),
  /** View RPC admission (absent: `VIEW_POLICY_DEFAULTS.rpc`). */
  rpc: z
    .strictObject({
      perViewPerMinute: z.number().int().min(1).max(100_000).optional(),
      perSessionPerMinute: z.number().int().min(1).max(1_000_000).optional(),
      queueDepth: z.number().int().min(1).max(1024).optional(),
      maxRequestBytes: z
        .number()
        .int()
        .min(256)
        .max(8 * 1024 * 1024)
        .optional(),
    })
    .optional(),
  /** How long View operation outcomes are kept for their idempotency keys (absent: 24 h). */
  idempotency: z.strictObject({ retentionMs: positiveMs(7 * 24 * 3600 * 1000) }).optional(),
  /**
   * Which initial calls may be replayed without asking (a placeholder's `refresh`): the native tool names listed,
   * and, when `readOnlyHint` is true, tools whose declaration carries `annotations.readOnlyHint: true`. Absent: none.
   */
  replay: z
    .strictObject({
      tools: z.array(z.string().min(1).max(128)).max(512).optional(),
      readOnlyHint: z.boolean().optional(),
    })
    .optional(),
  /**
   * Retention of app audit events per View (absent: `VIEW_POLICY_DEFAULTS.audit`): past `maxRecordsPerView`, or
   * older than `maxAgeMs`, a View's oldest operation records are compacted into one summary record (counts and
   * outcomes kept), so a polling View does not grow the ledger without bound.
   */
  audit: z
    .strictObject({
      maxRecordsPerView: z.number().int().min(1).max(100_000).optional(),
      maxAgeMs: positiveMs(30 * 24 * 3600 * 1000).optional(),
    })
    .optional(),
  /** Model-context register caps (absent: `VIEW_POLICY_DEFAULTS.registers`). */
  registers: z
    .strictObject({
      maxRegisterBytes: z
        .number()
        .int()
        .min(64)
        .max(1024 * 1024)
        .optional(),
      maxSessionBytes: z
        .number()
        .int()
        .min(64)
        .max(16 * 1024 * 1024)
        .optional(),
    })
    .optional(),
});
export type HostProfile = z.infer<typeof hostProfileSchema>;

const headerNameSchema = z.string().regex(/^[A-Za-z0-9-]{1,64}$/);
/** A secret's name in the registry's configured secrets: header values are never stored in clear. */
const secretRefSchema = z.strictObject({ secretRef: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/) });

export const toolsetConnectionSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('stdio'),
    command: z.string().min(1).max(1024),
    args: z.array(z.string().max(4096)).max(64).default([]),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/), z.string().max(4096)).default({}),
    cwd: z.string().min(1).max(1024).optional(),
  }),
  z.strictObject({
    kind: z.literal('http'),
    url: z.url({ protocol: /^https?$/ }).max(2048),
    headers: z.record(headerNameSchema, secretRefSchema).default({}),
  }),
]);

export const requireConfirmationSchema = z.union([z.boolean(), z.array(z.string().min(1).max(128)).min(1).max(512)]);
export type RequireConfirmation = z.infer<typeof requireConfirmationSchema>;

/** `McpToolsetSpec`: how to reach one MCP server, and the profile to bind (null: model-only by construction). */
export const toolsetSpecSchema = z.strictObject({
  connection: toolsetConnectionSchema,
  protocol: z.enum(['legacy', 'auto', '2026-07-28']).default('legacy'),
  toolFilter: z.array(z.string().min(1).max(128)).max(512).optional(),
  namePrefix: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_-]{0,31}$/)
    .optional(),
  listCacheTtlMs: z.number().int().min(0).max(3_600_000).default(0),
  /** Host confirmation policy (ADK `require_confirmation`): every tool (`true`) or the listed native tool names. */
  requireConfirmation: requireConfirmationSchema.default(false),
  profileId: registryIdSchema.nullable(),
});
export type ToolsetSpec = z.infer<typeof toolsetSpecSchema>;
export type ToolsetSpecInput = z.input<typeof toolsetSpecSchema>;

export const BINDING_STATES = ['UNMATERIALIZED', 'MATERIALIZING', 'PROFILE_BOUND', 'MODEL_ONLY', 'REVOKING', 'CLOSED'] as const;
export const bindingStateSchema = z.enum(BINDING_STATES);
export type BindingState = z.infer<typeof bindingStateSchema>;

export const providerReadinessSchema = z.object({
  provider: providerKindSchema,
  service: serviceNameSchema,
  present: z.boolean(),
  /** Why a provider does not count: UNAVAILABLE, NAMESPACE_MISMATCH, REVISION_MISMATCH, NOT_READY. */
  reason: z.string().optional(),
});
export type ProviderReadiness = z.infer<typeof providerReadinessSchema>;

export const toolsetStatusSchema = z.object({
  toolsetId: registryIdSchema,
  profileId: registryIdSchema.nullable(),
  state: bindingStateSchema,
  bindingGeneration: z.number().int().min(1),
  /** `v1.<keyId>.<hex>`: a keyed digest of the profile's fingerprint subset; null unless PROFILE_BOUND. */
  bindingRevision: z.string().nullable(),
  readiness: z.array(providerReadinessSchema),
  transport: z.enum(['stdio', 'http']),
  protocol: z.enum(['legacy', 'auto', '2026-07-28']),
  liveConnections: z.number().int().min(0),
  /** The spec's confirmation policy (absent: none), evaluated once per call at batch admission by governed-operations. */
  requireConfirmation: requireConfirmationSchema.optional(),
  /** The developer selection the spec declares: catalog-policy's default when a caller names none. */
  selection: z
    .object({
      toolFilter: z.array(z.string().min(1).max(128)).max(512).optional(),
      namePrefix: z
        .string()
        .regex(/^[A-Za-z][A-Za-z0-9_-]{0,31}$/)
        .optional(),
      listCacheTtlMs: z.number().int().min(0).max(3_600_000),
    })
    .optional(),
});
export type ToolsetStatus = z.infer<typeof toolsetStatusSchema>;

export const connectionClassSchema = z.enum(['app-safe', 'full']);

/** Where a connection generation lives and how to address it; callers route every operation to `ownerInstanceId`. */
export const generationHandleSchema = z.object({
  generationId: z.uuid(),
  ownerInstanceId: instanceIdSchema,
  /** The ownership claim's fencing value: strictly increasing across claims, checked on every operation. */
  fence: z.number().int().min(1),
  toolsetId: registryIdSchema,
  bindingGeneration: z.number().int().min(1),
  connectionClass: connectionClassSchema,
  advertisesUi: z.boolean(),
  bindingRevision: z.string().nullable(),
  /** The reference this acquisition holds (release it when done). */
  leaseId: z.uuid(),
});
export type GenerationHandle = z.infer<typeof generationHandleSchema>;

/** Identifies a generation on its owner: the id plus the fence of the claim the caller was given. */
export const generationRefSchema = z.strictObject({ generationId: z.uuid(), fence: z.number().int().min(1) });

export const acquireSessionSchema = z.strictObject({ key: sessionKeySchema, incarnation: incarnationSchema });
export const acquirePrincipalSchema = principalSchema;
