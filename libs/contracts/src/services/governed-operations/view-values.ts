import { z } from 'zod';
import { byteReferenceSchema } from '../../lib/byte-reference';
import { incarnationSchema, instanceIdSchema, principalSchema, sessionKeySchema, userIdSchema } from '../../lib/values';

/**
 * Value types of Views: one rendered instance of a widget's `ui://` resource in a browser, held by governed-operations
 * (its state in Redis, so any replica serves any View). A View is bound to the exact connection generation that
 * produced its widget's result; a grant (a host-held secret) authorizes what the View may do next.
 */

/** `vw-` and 32 hex digits: a View's public id (not authority: the grant is). */
export const viewIdSchema = z.string().regex(/^vw-[0-9a-f]{32}$/, 'view id: vw- and 32 hex digits');
export type ViewId = z.infer<typeof viewIdSchema>;

/** The View grant: 32 random bytes, base64url (256 bits). Stored only as a digest; never in HTML, context, results or logs. */
export const viewGrantSchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'view grant: 43 base64url characters');

/** `<eventId>:<functionCallId>`: the widget a View renders. */
export const widgetIdSchema = z.string().regex(/^[0-9]{1,16}:[A-Za-z0-9._:@-]{1,128}$/, 'widget id: <eventId>:<functionCallId>');

/**
 * Who calls a View operation, as the gateway resolved it: the verified principal and the user it acts for
 * (`principal.subject`, or the `userId` a `delegate` principal named). A View is visible only to callers of its
 * session's tenant and user (and, for a view token, `principal.restrictedTo` naming its session); any other View reads
 * as NOT_FOUND.
 */
export const viewCallerSchema = z.strictObject({ principal: principalSchema, userId: userIdSchema });
export type ViewCaller = z.infer<typeof viewCallerSchema>;

/** What the host page knows of its surroundings (MCP Apps `HostContext` fields the page may set). */
export const hostContextInputSchema = z.strictObject({
  theme: z.enum(['light', 'dark']).optional(),
  locale: z.string().min(2).max(35).optional(),
  timeZone: z.string().min(1).max(64).optional(),
  platform: z.enum(['web', 'desktop', 'mobile']).optional(),
  displayMode: z.enum(['inline', 'fullscreen', 'pip']).optional(),
  containerDimensions: z
    .strictObject({
      width: z.number().int().min(0).max(100_000).optional(),
      height: z.number().int().min(0).max(100_000).optional(),
      maxWidth: z.number().int().min(0).max(100_000).optional(),
      maxHeight: z.number().int().min(0).max(100_000).optional(),
    })
    .optional(),
});
export type HostContextInput = z.infer<typeof hostContextInputSchema>;

const modalitiesSchema = z.record(z.string(), z.unknown());

/**
 * MCP Apps `McpUiHostCapabilities` as AppHost offers them: the profile's declared capabilities intersected with what
 * AppHost implements (`serverTools`, `serverResources` with View RPC; `message`, `updateModelContext` with the
 * conversation hooks; `openLinks` with the host page's link opener). Absent members are not offered.
 */
export const offeredHostCapabilitiesSchema = z.strictObject({
  openLinks: z.strictObject({}).optional(),
  serverTools: z.strictObject({ listChanged: z.boolean().optional() }).optional(),
  serverResources: z.strictObject({ listChanged: z.boolean().optional() }).optional(),
  logging: z.strictObject({}).optional(),
  message: modalitiesSchema.optional(),
  updateModelContext: modalitiesSchema.optional(),
});
export type OfferedHostCapabilities = z.infer<typeof offeredHostCapabilitiesSchema>;

/** A CSP entry dropped while building the header, and why (never silently). `NOT_A_LIST`: the field itself is not an array. */
export const cspRejectionSchema = z.strictObject({
  field: z.enum(['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains']),
  value: z.string().max(2048),
  reason: z.enum(['WILDCARD', 'SCHEME_ONLY', 'KEYWORD', 'ILLEGAL_CHARACTERS', 'NOT_AN_ORIGIN', 'SCHEME_NOT_ALLOWED', 'NOT_A_STRING', 'NOT_A_LIST']),
});
export type CspRejection = z.infer<typeof cspRejectionSchema>;

/** Where the widget is: the event and function call it renders, its resource and the tool that produced it. */
export const viewWidgetSchema = z.strictObject({
  widgetId: widgetIdSchema,
  eventId: z.number().int().min(1),
  functionCallId: z.string().min(1).max(128),
  resourceUri: z.string().min(1).max(2048),
  /** The model-catalog name the call used. */
  tool: z.string().min(1).max(256),
  /** Null for a legacy (profile-less) widget. */
  toolsetId: z.string().nullable(),
});
export type ViewWidget = z.infer<typeof viewWidgetSchema>;

/** The connection generation a live View is bound to (where every View operation runs). */
export const viewGenerationRefSchema = z.strictObject({
  generationId: z.uuid(),
  fence: z.number().int().min(1),
  ownerInstanceId: instanceIdSchema,
});

/** Why a View renders as the read-only placeholder (RFC "read-only render"): no HTML, no result, no server access. */
export const PLACEHOLDER_REASONS = ['LEGACY_WIDGET', 'SEALED_RESULT_MISSING', 'SEALED_RESULT_CORRUPT', 'GENERATION_GONE', 'TOOLSET_REVOKED'] as const;
export const placeholderReasonSchema = z.enum(PLACEHOLDER_REASONS);
export type PlaceholderReason = z.infer<typeof placeholderReasonSchema>;

/**
 * The cold affordance of a placeholder: `refresh` when the initial call is replay-safe under the profile's replay
 * classification, otherwise `rerun` ("Run tool again", which warns that effects may repeat). Either creates a new
 * invocation, event, descriptor and View; never a resurrection of the old binding.
 */
export const coldActionSchema = z.strictObject({
  kind: z.enum(['refresh', 'rerun']),
  tool: z.string().min(1).max(256),
  label: z.string().max(128),
  warning: z.string().max(512).nullable(),
});
export type ColdAction = z.infer<typeof coldActionSchema>;

/** Why a live View stopped being live. A revoked View answers every operation with FAILED_PRECONDITION `VIEW_REVOKED` and this reason. */
export const VIEW_REVOCATION_REASONS = [
  'TORN_DOWN',
  'SESSION_DELETED',
  'TOOLSET_REVOKED',
  'TOOLSET_REBOUND',
  'GENERATION_GONE',
  'PRINCIPAL_REVOKED',
  'LEASE_EXPIRED',
] as const;
export const viewRevocationReasonSchema = z.enum(VIEW_REVOCATION_REASONS);
export type ViewRevocationReason = z.infer<typeof viewRevocationReasonSchema>;

/** The document of a live View as the host page gets it. */
export const viewDocumentSchema = z.strictObject({
  resourceUri: z.string(),
  /** Exactly the bytes of the one selected content item (`text`, or the decoded `blob`). */
  html: z.string(),
  /** `_meta.ui` of the same response: the content item's, then the listing entry's. */
  meta: z.record(z.string(), z.unknown()),
});

/** A live bootstrap: the exact document, its `_meta.ui`, the tool input, the full sealed result and the grant. */
export const liveViewSchema = z.strictObject({
  mode: z.literal('live'),
  viewId: viewIdSchema,
  /** Monotonic per View: a new bootstrap of a widget is a new View, never a higher generation of an old one. */
  viewGeneration: z.number().int().min(1),
  expiresAt: z.string(),
  grant: viewGrantSchema,
  document: viewDocumentSchema,
  widget: viewWidgetSchema,
  toolInput: z.strictObject({ arguments: z.record(z.string(), z.unknown()) }),
  /** The full sealed `CallToolResult` (the View's, never the model's projection). */
  toolResult: z.record(z.string(), z.unknown()),
  hostCapabilities: offeredHostCapabilitiesSchema,
  hostContext: z.record(z.string(), z.unknown()),
  csp: z.strictObject({ header: z.string(), rejected: z.array(cspRejectionSchema) }),
  /** The iframe `allow` attribute from `_meta.ui.permissions` (empty when none). */
  allow: z.string(),
});
export type LiveView = z.infer<typeof liveViewSchema>;

/** The read-only placeholder: a grantless View record, no HTML, no result bytes, no server access. */
export const placeholderViewSchema = z.strictObject({
  mode: z.literal('placeholder'),
  viewId: viewIdSchema,
  reason: placeholderReasonSchema,
  widget: viewWidgetSchema,
  actions: z.array(coldActionSchema),
});
export type PlaceholderView = z.infer<typeof placeholderViewSchema>;

export const openViewResponseSchema = z.discriminatedUnion('mode', [liveViewSchema, placeholderViewSchema]);
export type OpenViewResponse = z.infer<typeof openViewResponseSchema>;

/**
 * A live bootstrap as governed-operations answers it on the bus: a large document (`htmlLiteralReference`: the JSON
 * string literal of its text, as the server wrote it, held by the connection owner) is fetched by the gateway and
 * spliced into its answer as it is, so the services in between never carry it and nobody decodes it.
 */
export const liveViewAnswerSchema = liveViewSchema.extend({
  document: z.union([viewDocumentSchema, viewDocumentSchema.omit({ html: true }).extend({ htmlLiteralReference: byteReferenceSchema })]),
});
export type LiveViewAnswer = z.infer<typeof liveViewAnswerSchema>;

export const openViewAnswerSchema = z.discriminatedUnion('mode', [liveViewAnswerSchema, placeholderViewSchema]);
export type OpenViewAnswer = z.infer<typeof openViewAnswerSchema>;

/** What the owner may read of a View: state, expiry, generation; never the grant. */
export const viewSnapshotSchema = z.strictObject({
  viewId: viewIdSchema,
  mode: z.enum(['live', 'placeholder']),
  state: z.enum(['ACTIVE', 'REVOKED', 'CLOSED']),
  /** Why it is not ACTIVE (a revocation reason), or the placeholder reason; null while ACTIVE and live. */
  reason: z.union([viewRevocationReasonSchema, placeholderReasonSchema]).nullable(),
  session: sessionKeySchema,
  incarnation: incarnationSchema,
  widget: viewWidgetSchema,
  viewGeneration: z.number().int().min(1),
  generation: viewGenerationRefSchema.nullable(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  /** Set once `ui/notifications/request-teardown` was received (Views II). */
  teardownRequestedAt: z.string().nullable(),
});
export type ViewSnapshot = z.infer<typeof viewSnapshotSchema>;
