import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { generationRefSchema } from './registry-values';

/*
 * Operations on one connection generation. They are served only on the owner's per-instance subjects
 * `apphost.binding-registry.conn.<instanceId>.<operation>.v1` (instanceSubject(contract, id, 'conn')). An
 * owner that no longer holds the generation answers FAILED_PRECONDITION, details.reason
 * CONNECTION_GENERATION_GONE; a dead owner has no responders, which callers map to the same error.
 */

/** One tool as a connection lists it: the raw declaration, unknown fields kept. */
export const listedToolSchema = z.looseObject({
  name: z.string(),
  inputSchema: z.record(z.string(), z.unknown()).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});

export const ConnRetain = defineContract({
  service: 'binding-registry',
  operation: 'retain',
  version: 1,
  request: z.strictObject({ ref: generationRefSchema, leaseId: z.uuid(), holder: z.strictObject({ kind: z.string(), id: z.string() }) }),
  response: z.object({ references: z.number().int().min(1) }),
  errors: ['FAILED_PRECONDITION'],
});

export const ConnRelease = defineContract({
  service: 'binding-registry',
  operation: 'release',
  version: 1,
  request: z.strictObject({ ref: generationRefSchema, leaseId: z.uuid() }),
  /** Token-idempotent: releasing an already released lease answers `released: false`. */
  response: z.object({ released: z.boolean(), references: z.number().int().min(0) }),
  errors: ['FAILED_PRECONDITION'],
});

export const ConnListTools = defineContract({
  service: 'binding-registry',
  operation: 'list-tools',
  version: 1,
  request: z.strictObject({ ref: generationRefSchema }),
  response: z.object({ tools: z.array(listedToolSchema), pages: z.number().int(), bytes: z.number().int() }),
  errors: ['FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED'],
});

export const ConnCallTool = defineContract({
  service: 'binding-registry',
  operation: 'call-tool',
  version: 1,
  request: z.strictObject({
    ref: generationRefSchema,
    /** Caller-chosen id of this call, the handle for `cancel-call`. */
    callId: z.string().min(1).max(128),
    name: z.string().min(1).max(256),
    arguments: z.record(z.string(), z.unknown()).default({}),
    timeoutMs: z.number().int().min(1).max(600_000).optional(),
    /** A continuation of an input_required round (`full` class only). */
    continuation: z
      .strictObject({ flowId: z.string().min(1).max(128), inputResponses: z.record(z.string(), z.unknown()), requestState: z.string().max(65_536).optional() })
      .optional(),
  }),
  response: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('complete'),
      result: z.record(z.string(), z.unknown()),
      progress: z.array(z.object({ progress: z.number(), total: z.number().optional(), message: z.string().optional() })),
    }),
    z.object({
      kind: z.literal('input_required'),
      flowId: z.string(),
      round: z.number().int(),
      inputRequests: z.record(z.string(), z.unknown()),
      requestState: z.string().optional(),
    }),
  ]),
  errors: ['FAILED_PRECONDITION', 'OUTCOME_UNKNOWN', 'INVALID_ARGUMENT', 'NOT_FOUND'],
});

export const ConnCancelCall = defineContract({
  service: 'binding-registry',
  operation: 'cancel-call',
  version: 1,
  request: z.strictObject({ ref: generationRefSchema, callId: z.string().min(1).max(128) }),
  response: z.object({ cancelled: z.boolean() }),
  errors: ['FAILED_PRECONDITION'],
});

/**
 * `resources/read` on the generation. With `textReferenceFromBytes`, a content item whose `text` is at least that
 * many UTF-8 bytes comes back without `text` and with `textLiteralReference` (a byte reference to the text's JSON
 * string literal, quotes included: on stdio the very token the server wrote) and `textBytes` (the text's UTF-8
 * length), held by the owner, to be fetched once by whoever needs it (`BusClient.fetchReference`) and spliced as it
 * is into a JSON document, so the services in between never carry a large document and nobody decodes it. Other
 * items (and `blob`s) come back as the server sent them.
 */
export const ConnReadResource = defineContract({
  service: 'binding-registry',
  operation: 'read-resource',
  version: 1,
  request: z.strictObject({
    ref: generationRefSchema,
    uri: z.string().min(1).max(2048),
    textReferenceFromBytes: z.number().int().min(1).optional(),
  }),
  response: z.object({ contents: z.array(z.record(z.string(), z.unknown())) }).loose(),
  errors: ['FAILED_PRECONDITION', 'DEADLINE_EXCEEDED', 'INVALID_ARGUMENT'],
});

/**
 * `resources/list` / `resources/templates/list` on the generation: every page (`cursor` loop inside the owner, within
 * the profile's discovery limits), raw entries as the server listed them.
 */
export const ConnListResources = defineContract({
  service: 'binding-registry',
  operation: 'list-resources',
  version: 1,
  request: z.strictObject({ ref: generationRefSchema }),
  response: z.object({ resources: z.array(z.looseObject({ uri: z.string(), name: z.string().optional() })), pages: z.number().int(), bytes: z.number().int() }),
  errors: ['FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED'],
});

export const ConnListResourceTemplates = defineContract({
  service: 'binding-registry',
  operation: 'list-resource-templates',
  version: 1,
  request: z.strictObject({ ref: generationRefSchema }),
  response: z.object({
    resourceTemplates: z.array(z.looseObject({ uriTemplate: z.string(), name: z.string().optional() })),
    pages: z.number().int(),
    bytes: z.number().int(),
  }),
  errors: ['FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED'],
});

export const ConnPing = defineContract({
  service: 'binding-registry',
  operation: 'ping',
  version: 1,
  request: z.strictObject({ ref: generationRefSchema }),
  response: z.object({ ok: z.literal(true), pid: z.number().int().nullable() }),
  errors: ['FAILED_PRECONDITION', 'DEADLINE_EXCEEDED'],
});

/**
 * What the owner holds for one generation now: its references (leases of Views, reservations, runners) by holder
 * kind, and operations in flight. A generation with no references and nothing in flight is evictable (idle timer).
 */
export const ConnGenerationState = defineContract({
  service: 'binding-registry',
  operation: 'generation-state',
  version: 1,
  request: z.strictObject({ ref: generationRefSchema }),
  response: z.object({
    references: z.number().int().min(0),
    byHolderKind: z.record(z.string(), z.number().int().min(1)),
    inflight: z.number().int().min(0),
    evictable: z.boolean(),
  }),
  errors: ['FAILED_PRECONDITION'],
});

/** Revocation fan-out: the owner closes its generations of a binding generation (advertising ones, or all). */
export const ConnCloseBinding = defineContract({
  service: 'binding-registry',
  operation: 'close-binding',
  version: 1,
  request: z.strictObject({ toolsetId: z.string(), bindingGeneration: z.number().int().min(1), scope: z.enum(['advertising', 'all']) }),
  response: z.object({ closed: z.number().int().min(0) }),
  errors: [],
});

/** The reason every caller sees when a generation's owner no longer holds it. */
export const CONNECTION_GENERATION_GONE = 'CONNECTION_GENERATION_GONE';
