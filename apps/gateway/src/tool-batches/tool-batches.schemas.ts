import { z } from 'zod';
import { appNameSchema, runToolBatchResponseSchema, toolBatchCallSchema, userIdSchema } from '@apphost/contracts';
import { USER_ID_DESCRIPTION } from '../http/request-input';

/** `POST /v1/sessions/{sessionId}/tool-batches`: one model turn's tool calls, in the model's emission order. */
export const toolBatchBodySchema = z.strictObject({
  appName: appNameSchema,
  userId: userIdSchema.optional().describe(USER_ID_DESCRIPTION),
  invocationId: z.string().min(1).max(128),
  calls: z.array(toolBatchCallSchema).min(1).max(64),
});

/** The appended event: function responses (model projections for UI tools) and the widget descriptors. */
export const toolBatchResultSchema = runToolBatchResponseSchema;

/** `POST /v1/sessions/{sessionId}/confirmations/{confirmationId}`: the user's decision; the sealed arguments run, never new ones. */
export const confirmationDecisionBodySchema = z.strictObject({
  appName: appNameSchema,
  userId: userIdSchema.optional().describe(USER_ID_DESCRIPTION),
  confirmed: z.boolean(),
});
