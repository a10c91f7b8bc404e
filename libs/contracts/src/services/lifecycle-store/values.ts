import { z } from 'zod';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';

/**
 * Value types of the lifecycle-store: session lifecycle states, the session view its operations return, and the
 * event-ledger shapes (append input, provenance path, public event). Widget descriptors and their sealed-result
 * references are defined here because the ledger is the first place they are validated; they are candidates for
 * `lib/values.ts` once a second service needs them.
 */

export const sessionStateSchema = z.enum(['CREATING', 'ACTIVE', 'DELETING', 'DELETED']);
export type SessionState = z.infer<typeof sessionStateSchema>;

/** A client-chosen creation-operation id: retried creates with the same id converge on one session. */
export const creationOperationIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/, 'creation operation id: 1-128 chars of [A-Za-z0-9._:@-]');

/** Participant (service) names of the deletion cascade: one subject token each. */
export const cascadeParticipantNameSchema = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'participant: 1-63 chars of [a-z0-9-]');

export const cascadeParticipantProgressSchema = z
  .object({
    name: cascadeParticipantNameSchema,
    revoked: z.boolean(),
    purged: z.boolean(),
    attempts: z.number().int().min(0),
    lastError: z.string().max(512).optional(),
  })
  .strict();
export type CascadeParticipantProgress = z.infer<typeof cascadeParticipantProgressSchema>;

/** Durable deletion progress, kept on the lifecycle record (never as session events). */
export const cascadeProgressSchema = z
  .object({
    participants: z.array(cascadeParticipantProgressSchema),
    sessionPurged: z.boolean(),
  })
  .strict();
export type CascadeProgress = z.infer<typeof cascadeProgressSchema>;

/** What every lifecycle operation returns: the record as committed. Never receipts, digests or fence tokens. */
export const sessionSnapshotSchema = z
  .object({
    session: sessionKeySchema,
    incarnation: incarnationSchema,
    state: sessionStateSchema,
    version: z.number().int().min(1),
    /** True when incarnation 1 of this session was adopted from a pre-existing session row (migration). */
    adopted: z.boolean(),
    updatedAt: z.string(),
    cascade: cascadeProgressSchema.nullable(),
  })
  .strict();
export type SessionSnapshot = z.infer<typeof sessionSnapshotSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Event ledger
// ---------------------------------------------------------------------------------------------------------------

const callIdSchema = z.string().min(1).max(128);
const jsonObjectSchema = z.record(z.string(), z.unknown());

/** The opaque locator of a sealed record: not authority, not result bytes. */
export const descriptorSealedResultRefSchema = z
  .object({
    recordId: z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, 'record id: 16-128 chars of [A-Za-z0-9_-]'),
    schemaVersion: z.number().int().min(1).max(1000),
  })
  .strict();
export type DescriptorSealedResultRef = z.infer<typeof descriptorSealedResultRefSchema>;

/** `McpAppWidgetDescriptor`: stable references and one opaque locator; strict, so no bytes or grants ride along. */
export const widgetDescriptorSchema = z
  .object({
    schemaVersion: z.literal(1),
    resourceUri: z.string().regex(/^ui:\/\/\S{1,2040}$/, 'resource uri: a ui:// URI'),
    correlation: z
      .object({
        invocationId: z.string().min(1).max(128).optional(),
        functionCallId: callIdSchema,
        agentPath: z.string().max(512).optional(),
        branch: z.string().max(512).optional(),
      })
      .strict(),
    serverId: z.string().min(1).max(128),
    toolsetId: z.string().min(1).max(128),
    bindingRevision: z.string().min(1).max(256),
    sealedResultRef: descriptorSealedResultRefSchema.nullable(),
  })
  .strict();
export type WidgetDescriptor = z.infer<typeof widgetDescriptorSchema>;

/**
 * The legacy `UiWidget` payload a profile-less (`MODEL_ONLY`) toolset emits unchanged: no sealing, no reference.
 * Renderers read both it and the descriptor (a descriptor for profile-bound toolsets, this for `MODEL_ONLY`
 * ones); it carries the model's own arguments, never result bytes.
 */
export const legacyWidgetSchema = z
  .object({
    resourceUri: z.string().regex(/^ui:\/\/\S{1,2040}$/, 'resource uri: a ui:// URI'),
    tool: z.string().min(1).max(256),
    toolArgs: jsonObjectSchema,
  })
  .strict();
export type LegacyWidget = z.infer<typeof legacyWidgetSchema>;

/** A widget on an event: a profile-bound descriptor or, for a profile-less toolset, the legacy payload. */
export const eventWidgetSchema = z.union([widgetDescriptorSchema, legacyWidgetSchema]);
export type EventWidget = z.infer<typeof eventWidgetSchema>;

export function isWidgetDescriptor(widget: EventWidget): widget is WidgetDescriptor {
  return 'schemaVersion' in widget;
}

export const functionCallSchema = z.object({ id: callIdSchema, name: z.string().min(1).max(256), args: jsonObjectSchema.optional() }).strict();
export const functionResponseSchema = z.object({ id: callIdSchema, name: z.string().min(1).max(256), response: jsonObjectSchema.optional() }).strict();

export const INVOCATION_ORIGINS = ['user', 'mcp_app', 'system'] as const;
export const invocationOriginSchema = z.enum(INVOCATION_ORIGINS);
export type InvocationOrigin = z.infer<typeof invocationOriginSchema>;
export const eventEmitterSchema = z.enum(['runner', 'host', 'system', 'session-api']);
export const immediateCallerSchema = z.enum(['model', 'app', 'host']);

/**
 * An event as a caller offers it for appending. The protected fields (`audience`, `invocationOrigin`, `emitter`,
 * `immediateCaller`) are accepted with any value only so that the finalizer can discard them: they are never trusted.
 */
export const ledgerEventInputSchema = z
  .object({
    author: z.string().min(1).max(256),
    invocationId: z.string().min(1).max(128).optional(),
    content: jsonObjectSchema.optional(),
    functionCalls: z.array(functionCallSchema).max(128).optional(),
    functionResponses: z.array(functionResponseSchema).max(128).optional(),
    widgets: z.array(eventWidgetSchema).max(64).optional(),
    /** Event-level references of interactive, non-rendering results, keyed by function-call id. */
    sealedResultRefs: z.record(callIdSchema, descriptorSealedResultRefSchema).optional(),
    actions: z
      .object({ stateDelta: jsonObjectSchema.optional(), artifactDelta: z.record(z.string(), z.number().int()).optional() })
      .strict()
      .optional(),
    customMetadata: jsonObjectSchema.optional(),
    audience: z.unknown().optional(),
    invocationOrigin: z.unknown().optional(),
    emitter: z.unknown().optional(),
    immediateCaller: z.unknown().optional(),
  })
  .strict();
export type LedgerEventInput = z.infer<typeof ledgerEventInputSchema>;

/**
 * The append path, chosen by the (internal) caller; the finalizer derives every protected field from it per the
 * RFC provenance table. App input can never choose it: only services on the bus append.
 */
export const appendProvenanceSchema = z.discriminatedUnion('path', [
  z.object({ path: z.literal('user-turn') }).strict(),
  z.object({ path: z.literal('ui-message') }).strict(),
  z.object({ path: z.literal('app-operation') }).strict(),
  z.object({ path: z.literal('bootstrap-render') }).strict(),
  z.object({ path: z.literal('system') }).strict(),
  z.object({ path: z.literal('reconciliation'), ingress: invocationOriginSchema }).strict(),
  z.object({ path: z.literal('session-api') }).strict(),
]);
export type AppendProvenance = z.infer<typeof appendProvenanceSchema>;

/** An event as the ledger serves it publicly: an explicit projection, never sealed bytes, digests or grants. */
export const publicEventSchema = z
  .object({
    id: z.number().int().min(1),
    incarnation: incarnationSchema,
    timestamp: z.string(),
    author: z.string(),
    invocationId: z.string().optional(),
    content: jsonObjectSchema.optional(),
    functionCalls: z.array(functionCallSchema).optional(),
    functionResponses: z.array(functionResponseSchema).optional(),
    widgets: z.array(eventWidgetSchema).optional(),
    sealedResultRefs: z.record(callIdSchema, descriptorSealedResultRefSchema).optional(),
    actions: z
      .object({ stateDelta: jsonObjectSchema.optional(), artifactDelta: z.record(z.string(), z.number().int()).optional() })
      .strict()
      .optional(),
    customMetadata: jsonObjectSchema.optional(),
    audience: z.literal('app_audit').nullable(),
    invocationOrigin: invocationOriginSchema,
    emitter: eventEmitterSchema,
    immediateCaller: immediateCallerSchema.nullable(),
  })
  .strict();
export type PublicEvent = z.infer<typeof publicEventSchema>;
