import { z } from 'zod';
import { errorCodeSchema } from '../../lib/errors';
import { instanceIdSchema, principalSchema } from '../../lib/values';
import { acquireSessionSchema, connectionClassSchema, registryIdSchema } from '../binding-registry/registry-values';

/** A tool name as MCP servers send it (native) or as the model sees it (prefixed). */
export const toolNameSchema = z.string().min(1).max(256);

/** The developer's selection of one toolset for a model catalog: which tools (all when absent) and the name prefix. */
export const toolsetSelectionSchema = z.strictObject({
  toolsetId: registryIdSchema,
  toolFilter: z.array(toolNameSchema).max(512).optional(),
  namePrefix: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_-]{0,31}$/)
    .optional(),
  /** How long a composed model catalog may be served from the cache; 0 = always fresh. */
  cacheTtlMs: z.number().int().min(0).max(3_600_000).optional(),
});
export type ToolsetSelection = z.infer<typeof toolsetSelectionSchema>;

/** Who the catalog is for: generations are keyed by the principal's security domain and the session incarnation. */
export const catalogAudienceSchema = z.strictObject({ principal: principalSchema, session: acquireSessionSchema });
export type CatalogAudience = z.infer<typeof catalogAudienceSchema>;

/** How to address a live connection generation (a View's bound generation, from `acquire-generation`). */
export const boundGenerationSchema = z.strictObject({
  generationId: z.uuid(),
  fence: z.number().int().min(1),
  ownerInstanceId: instanceIdSchema,
  toolsetId: registryIdSchema,
  bindingGeneration: z.number().int().min(1),
  connectionClass: connectionClassSchema,
});
export type BoundGeneration = z.infer<typeof boundGenerationSchema>;

/** The raw declaration exactly as the server listed it (unknown fields kept). */
export const rawToolDeclarationSchema = z.looseObject({ name: toolNameSchema });

/**
 * `BoundToolHandle`: a catalog entry pinned to the generation that will execute it. `declaration` is the exact raw
 * declaration the server listed on `execution`; `fingerprint` is its tool-definition fingerprint.
 */
export const boundToolHandleSchema = z.object({
  handleId: z.string().regex(/^th_[0-9a-f]{32}$/),
  toolsetId: registryIdSchema,
  nativeName: toolNameSchema,
  /** The model catalog's prefixed name, or the native name in an app catalog. */
  exposedName: toolNameSchema,
  declaration: rawToolDeclarationSchema,
  fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
  visibility: z.array(z.enum(['model', 'app'])),
  /** The canonical `ui://` resource of a UI-associated tool, else null. */
  resourceUri: z.string().nullable(),
  catalogGeneration: z.string(),
  connectionClass: connectionClassSchema,
  execution: z.object({
    generationId: z.uuid(),
    fence: z.number().int().min(1),
    ownerInstanceId: instanceIdSchema,
    bindingGeneration: z.number().int().min(1),
  }),
});
export type BoundToolHandle = z.infer<typeof boundToolHandleSchema>;

/** Why a listed tool is absent from a catalog (logged, and reported to admins and tests). */
export const EXCLUSION_REASONS = [
  'NOT_SELECTED',
  'NOT_VISIBLE',
  'MALFORMED_VISIBILITY',
  'MALFORMED_UI_META',
  'RESERVED_NAME',
  'QUARANTINED',
  'CLASS_DISAGREEMENT',
  'CLASS_MISSING',
  'DUPLICATE_NAME',
  'NOT_ALLOWED_BY_APP_POLICY',
] as const;
export const exclusionSchema = z.object({ toolsetId: registryIdSchema, name: toolNameSchema, reason: z.enum(EXCLUSION_REASONS) });
export type Exclusion = z.infer<typeof exclusionSchema>;

/**
 * A selected toolset whose tools are missing from a catalog because it could not be discovered (it did not start,
 * refused the connection, failed or exceeded a bound while listing): the error's code, its `details.reason`, and a
 * message naming the toolset and the cause (errno, exit code and last stderr line, host:port, HTTP status…).
 */
export const unavailableToolsetSchema = z.object({
  toolsetId: registryIdSchema,
  code: errorCodeSchema,
  reason: z.string().max(64),
  message: z.string().max(1024),
});
export type UnavailableToolset = z.infer<typeof unavailableToolsetSchema>;

/** The app-call policy of a View: the originating generation's app-visible tools by default, narrowable to none. */
export const appCallPolicySchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('all-app-visible') }),
  z.strictObject({ mode: z.literal('allow'), names: z.array(toolNameSchema).max(512) }),
  z.strictObject({ mode: z.literal('deny-all') }),
]);
export type AppCallPolicy = z.infer<typeof appCallPolicySchema>;
