import { z } from 'zod';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';

/**
 * Shared value types of the sealed-result store's operations. The store keeps the full tool result (with its
 * refresh record) behind an opaque reference; nothing in these types ever carries the store-private digest.
 */

/** Version of the sealed envelope format; part of every public reference. */
export const SEALED_ENVELOPE_SCHEMA_VERSION = 1;
/** Default canonical size and depth limits of one envelope (the RFC's defaults; the store may be configured lower). */
export const SEALED_MAX_CANONICAL_BYTES = 8 * 1024 * 1024;
export const SEALED_MAX_DEPTH = 64;
/** Raw bytes per chunk when an envelope moves in pieces (base64 on the wire: ~683 KiB, under one bus message). */
export const SEALED_CHUNK_BYTES = 512 * 1024;
/** Envelopes up to this canonical size travel inline in one message (create request and resolve reply). */
export const SEALED_INLINE_MAX_BYTES = 768 * 1024;
/** Upper bound of chunks in one transfer (8 MiB / 512 KiB = 16; the bound leaves room for larger configured limits). */
export const SEALED_MAX_CHUNKS = 128;

const opaqueId = (what: string) => z.string().min(1, `${what} is required`).max(256, `${what}: at most 256 chars`);

/** ≥ 128 random bits, base64url without padding: 22 chars for 16 bytes. */
export const sealedRecordIdSchema = z.string().regex(/^[A-Za-z0-9_-]{22,64}$/, 'record id: 22-64 base64url chars');
export const eventIdSchema = opaqueId('event id');
export const functionCallIdSchema = opaqueId('function call id');
export const operationInstanceIdSchema = opaqueId('operation instance id');
export const uploadIdSchema = z.string().regex(/^[A-Za-z0-9_-]{22,64}$/, 'upload id: 22-64 base64url chars');

/** The only public form of a sealed record: safe on any surface (descriptor, event, SSE) by construction. */
export const sealedResultRefSchema = z.strictObject({
  recordId: sealedRecordIdSchema,
  schemaVersion: z.number().int().min(1).max(1_000_000),
});
export type SealedResultRef = z.infer<typeof sealedResultRefSchema>;

/** Where a record is created: the event id is bound later, by commit. */
export const sealedCreateScopeSchema = z.strictObject({
  session: sessionKeySchema.strict(),
  incarnation: incarnationSchema,
  functionCallId: functionCallIdSchema,
});
export type SealedCreateScope = z.infer<typeof sealedCreateScopeSchema>;

/** The full key: every field must match for commit, resolve and chunk reads (any mismatch is NOT_FOUND). */
export const sealedRecordKeySchema = z.strictObject({
  session: sessionKeySchema.strict(),
  incarnation: incarnationSchema,
  eventId: eventIdSchema,
  functionCallId: functionCallIdSchema,
  recordId: sealedRecordIdSchema,
});
export type SealedRecordKey = z.infer<typeof sealedRecordKeySchema>;

/** Persistence compatibility: a caller that pinned a store (from `describe`) names it; any other store refuses. */
export const expectedStoreSchema = z.strictObject({
  namespace: z.uuid(),
  revision: z.string().min(1).max(64),
});
export type ExpectedStore = z.infer<typeof expectedStoreSchema>;

/** The merged `CallToolResult` exactly as the server returned it (content, structuredContent, _meta, …). */
export const sealedCallToolResultSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string().min(1).max(64) })).max(10_000),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});

/**
 * `RefreshInvocationRecord`: what re-running the initial call needs when its sealed result is gone or must be
 * refreshed (a cold replay), never on a public surface. Arguments are carried as canonical JSON (inline) or as a protected locator plus its digest.
 */
export const refreshInvocationRecordSchema = z.strictObject({
  serverId: opaqueId('server id'),
  toolsetId: opaqueId('toolset id'),
  nativeToolName: opaqueId('native tool name'),
  arguments: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('inline'), value: z.record(z.string(), z.unknown()) }),
    z.strictObject({ kind: z.literal('locator'), locator: z.string().min(1).max(1024), digest: z.string().regex(/^[0-9a-f]{64}$/) }),
  ]),
  /** The catalog (tool schema) generation the call was admitted against. */
  catalogGeneration: opaqueId('catalog generation'),
  bindingRevision: z.string().min(1).max(512),
  replayClassification: z.strictObject({ source: opaqueId('classification source'), revision: opaqueId('classification revision') }),
  initiatingOrigin: z.enum(['model', 'app']),
  correlation: z.strictObject({
    invocationId: opaqueId('invocation id'),
    functionCallId: functionCallIdSchema,
    agentPath: z.string().max(1024).optional(),
    branch: z.string().max(1024).optional(),
  }),
});
export type RefreshInvocationRecord = z.infer<typeof refreshInvocationRecordSchema>;

/** What is sealed: the full result and its refresh record, stored as one canonical JSON document. */
export const sealedEnvelopeSchema = z.strictObject({
  result: sealedCallToolResultSchema,
  refresh: refreshInvocationRecordSchema,
});
export type SealedEnvelope = z.infer<typeof sealedEnvelopeSchema>;

export const sealedRecordStateSchema = z.enum(['PENDING', 'COMMITTED']);
export type SealedRecordState = z.infer<typeof sealedRecordStateSchema>;

/** Reply of `create` and `create-finish`. */
export const sealedCreateResponseSchema = z.strictObject({
  ref: sealedResultRefSchema,
  state: sealedRecordStateSchema,
  /** False when this was a retry of the same operation instance with the same bytes. */
  created: z.boolean(),
});
export type SealedCreateResponse = z.infer<typeof sealedCreateResponseSchema>;

/** A chunk of canonical envelope bytes on the wire. */
export const sealedChunkDataSchema = z.base64().max(Math.ceil(SEALED_CHUNK_BYTES / 3) * 4);
