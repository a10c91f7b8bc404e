import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, principalSchema, sessionKeySchema } from '../../lib/values';
import { toolNameSchema, toolsetSelectionSchema } from '../catalog-policy/catalog-values';
import { eventWidgetSchema } from '../lifecycle-store/values';

/** A function-call id as the model emitted it (ADK `FunctionCall.id`); absent ids are populated deterministically. */
export const batchFunctionCallIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/, 'function call id: 1-128 chars of [A-Za-z0-9._:@-]');

/** One model-originated tool call: `tool` is a model-catalog (prefixed) name. */
export const toolBatchCallSchema = z.strictObject({
  functionCallId: batchFunctionCallIdSchema.optional(),
  tool: toolNameSchema,
  arguments: z.record(z.string(), z.unknown()).default({}),
});
export type ToolBatchCall = z.input<typeof toolBatchCallSchema>;

/** The terminal error a function response carries when its call did not produce a result. */
export const toolBatchErrorSchema = z.strictObject({
  /**
   * `MIXED_BATCH`, `CONFIRMATION_REQUIRED` (not run yet), `CONFIRMATION_DENIED`, `CONFIRMATION_EXPIRED`,
   * `CONFIRMATION_STALE`, `TOOL_DRIFT`, `RESULT_INVALID`, `RESULT_TOO_LARGE`, `INPUT_REQUIRED_UNSUPPORTED`,
   * `EXECUTED_NOT_SEALED` (the tool ran, its UI result could not be sealed: do not call it again blindly), or the
   * error code of the failed call.
   */
  code: z.string().min(1).max(64),
  message: z.string().max(1024),
});

/** One function response of the appended event, in the model's emission order. */
export const toolBatchFunctionResponseSchema = z.strictObject({
  functionCallId: batchFunctionCallIdSchema,
  /** The model-catalog name the model called. */
  name: toolNameSchema,
  /** The model projection for UI tools, the result unchanged for non-UI tools, or `{ error }`. */
  response: z.record(z.string(), z.unknown()),
});
export type ToolBatchFunctionResponse = z.infer<typeof toolBatchFunctionResponseSchema>;

/** The id of a sealed confirmation permit; also the id of its `adk_request_confirmation` function call. */
export const confirmationIdSchema = z.string().regex(/^cf-[0-9a-f]{32}$/, 'confirmation id: cf- and 32 hex digits');

/**
 * A call that waits for the user's decision: it has not run. Its arguments are sealed in the permit; the decision
 * (`POST …/confirmations/{confirmationId}`) executes exactly these, never arguments sent again.
 */
export const pendingConfirmationSchema = z.strictObject({
  confirmationId: confirmationIdSchema,
  functionCallId: batchFunctionCallIdSchema,
  tool: toolNameSchema,
  arguments: z.record(z.string(), z.unknown()),
  /** `canonicalDigest("confirmation-arguments", arguments)`: what the user approves is what runs. */
  argumentsDigest: z.string().regex(/^[0-9a-f]{64}$/),
  expiresAt: z.string(),
});
export type PendingConfirmation = z.infer<typeof pendingConfirmationSchema>;

export const runToolBatchResponseSchema = z.strictObject({
  /** The ledger id of the one event appended for the batch. */
  eventId: z.number().int().min(1),
  incarnation: incarnationSchema,
  /** `MIXED_BATCH` when the batch was rejected before anything ran; null when it was admitted. */
  rejection: z.literal('MIXED_BATCH').nullable(),
  functionResponses: z.array(toolBatchFunctionResponseSchema),
  /** Descriptors (profile-bound toolsets) or legacy payloads (`MODEL_ONLY` toolsets), in emission order. */
  widgets: z.array(eventWidgetSchema),
  /** Calls the toolset's policy holds for the user's confirmation (their responses say CONFIRMATION_REQUIRED). */
  confirmations: z.array(pendingConfirmationSchema),
});
export type RunToolBatchResponse = z.infer<typeof runToolBatchResponseSchema>;

/**
 * `apphost.governed-operations.run-tool-batch.v1`: one model turn's tool calls, end to end. The session must be
 * ACTIVE for `session` (NOT_FOUND otherwise). The batch is classified against one catalog-policy snapshot: a batch
 * mixing UI and non-UI calls with a UI call on a profile-bound toolset is rejected before anything runs (one event,
 * one `MIXED_BATCH` error response per call); otherwise each call the toolset's confirmation policy holds gets a
 * sealed permit and does not run yet, and every other call executes on its handle's generation (no automatic
 * retry); results are validated; UI results of profile-bound toolsets are sealed PENDING and ONE event is appended
 * (projections + descriptors with their own `sealedResultRef`, or the legacy payload and the result unchanged for a
 * `MODEL_ONLY` toolset) and the references are committed. Function-call ids must be unique (INVALID_ARGUMENT); a call naming a tool outside the
 * catalog fails the whole batch (FAILED_PRECONDITION from catalog-policy) with no event. Arguments that are not
 * canonical I-JSON within the limits are INVALID_ARGUMENT (`ARGUMENTS_NOT_CANONICAL`) before anything runs.
 *
 * One execution per call: the same `invocationId` + function-call ids on the same incarnation answer the batch's
 * own (first) event again, nothing re-runs; other calls under those ids are CONFLICT (`CALL_ID_REUSED`); a
 * duplicate of a batch still running waits for its event until the deadline, then OUTCOME_UNKNOWN
 * (`CALL_IN_FLIGHT`). Errors before any call ran keep the store's code (UNAVAILABLE: nothing ran, retry); a
 * failure to record the event after a call ran is OUTCOME_UNKNOWN (`EXECUTED_NOT_RECORDED`).
 */
export const GovernedRunToolBatch = defineContract({
  service: 'governed-operations',
  operation: 'run-tool-batch',
  version: 1,
  request: z.strictObject({
    principal: principalSchema,
    session: sessionKeySchema.strict(),
    invocationId: z.string().min(1).max(128),
    calls: z.array(toolBatchCallSchema).min(1).max(64),
    /** The developer's toolset selection; absent → the app's configured selection (catalog-policy). */
    toolsets: z.array(toolsetSelectionSchema).min(1).max(32).optional(),
  }),
  response: runToolBatchResponseSchema,
  errors: ['INVALID_ARGUMENT', 'NOT_FOUND', 'CONFLICT', 'FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED', 'OUTCOME_UNKNOWN', 'UNAVAILABLE'],
});
