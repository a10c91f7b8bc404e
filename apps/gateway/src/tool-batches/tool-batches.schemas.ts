import { z } from 'zod';
import { appNameSchema, runToolBatchResponseSchema, toolBatchCallSchema, userIdSchema } from '@apphost/contracts';

/** `POST /v1/sessions/{sessionId}/tool-batches`: one model turn's tool calls, in the model's emission order. */
export const toolBatchBodySchema = z.strictObject({
  appName: appNameSchema,
  /** Defaults to the token's subject; any other user reads as 404. */
  userId: userIdSchema.optional(),
  invocationId: z.string().min(1).max(128),
  calls: z.array(toolBatchCallSchema).min(1).max(64),
});

/** The appended event: function responses (model projections for UI tools) and the widget descriptors. */
export const toolBatchResultSchema = runToolBatchResponseSchema;

/** `POST /v1/sessions/{sessionId}/confirmations/{confirmationId}`: the user's decision; the sealed arguments run, never new ones. */
export const confirmationDecisionBodySchema = z.strictObject({
  appName: appNameSchema,
  /** Defaults to the token's subject; any other user reads as 404. */
  userId: userIdSchema.optional(),
  confirmed: z.boolean(),
});
