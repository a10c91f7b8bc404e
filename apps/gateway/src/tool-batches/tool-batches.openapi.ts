import { z } from 'zod';
import { confirmationDecisionBodySchema, toolBatchBodySchema, toolBatchResultSchema } from './tool-batches.schemas';

const json = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any', io });
const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });

/** The model tool-batch route (governed-operations behind it). */
export function toolBatchPaths(): Record<string, unknown> {
  return {
    '/v1/sessions/{sessionId}/tool-batches': {
      post: {
        summary:
          "Runs one model turn's tool calls and appends ONE event: function responses in emission order (the model projection for UI tools), and a widget descriptor with its own sealed-result reference per UI result. A batch mixing UI and non-UI tools runs nothing: the event carries one MIXED_BATCH error response per call. Each call runs at most once: a retry with the same invocationId and function-call ids returns the same event.",
        parameters: [{ name: 'sessionId', in: 'path', required: true, schema: { type: 'string' } }],
        requestBody: { required: true, content: { 'application/json': { schema: json(toolBatchBodySchema, 'input') } } },
        responses: {
          '200': { description: 'The appended event', content: { 'application/json': { schema: json(toolBatchResultSchema, 'output') } } },
          '400': error(
            'Invalid path or body, nothing ran: a call names a tool outside the model catalog or discovery failed closed (FAILED_PRECONDITION); duplicate function-call ids (DUPLICATE_FUNCTION_CALL_ID), or arguments that are not canonical I-JSON within the limits — a lone surrogate, a non-finite or unsafe number, too deep or too big (ARGUMENTS_NOT_CANONICAL)',
          ),
          '401': error('Missing or invalid bearer token'),
          '403': error('The token lacks the runtime scope'),
          '404': error('No such active session for this principal'),
          '409': error('These invocation and function-call ids already name other calls (CALL_ID_REUSED); nothing ran'),
          '429': error('A discovery bound was exceeded'),
          '503': error('A store the batch needs (session ledger, sealed-result store, coordination store) is unavailable before anything ran; retry'),
          '504': error(
            'The batch took too long, or OUTCOME_UNKNOWN: a tool ran but its event could not be recorded (EXECUTED_NOT_RECORDED), or the same batch is still in flight (CALL_IN_FLIGHT). A retry with the same invocation and function-call ids never runs a tool again: it returns the recorded event once there is one',
          ),
        },
      },
    },
    '/v1/sessions/{sessionId}/confirmations/{confirmationId}': {
      post: {
        summary:
          "The user's decision on a call the toolset's confirmation policy held (its response said CONFIRMATION_REQUIRED; the batch listed it under `confirmations`). Decided exactly once. Approved: the sealed arguments run if the tool, server and binding are still the ones approved (else CONFIRMATION_STALE). Denied or expired: nothing runs. ONE event is appended with the call's function response under its original id.",
        parameters: [
          { name: 'sessionId', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'confirmationId', in: 'path', required: true, schema: { type: 'string', pattern: '^cf-[0-9a-f]{32}$' } },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: json(confirmationDecisionBodySchema, 'input') } } },
        responses: {
          '200': { description: 'The appended event', content: { 'application/json': { schema: json(toolBatchResultSchema, 'output') } } },
          '400': error('Invalid path or body'),
          '401': error('Missing or invalid bearer token'),
          '403': error('The token lacks the runtime scope'),
          '404': error('No pending confirmation with this id in this session (already decided, never issued, or the session is gone or was recreated)'),
          '500': error(
            'DATA_LOSS (CONFIRMATION_PERMIT_LOST): the confirmation was issued but its pending permit was lost (the coordination store restarted); nothing ran, ask the model again',
          ),
          '503': error('A store the decision needs is unavailable'),
          '504': error('The call took too long, or OUTCOME_UNKNOWN (EXECUTED_NOT_RECORDED): the approved call ran but its event could not be recorded'),
        },
      },
    },
  };
}
