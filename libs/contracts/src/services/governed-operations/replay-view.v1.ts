import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { hostContextInputSchema, openViewAnswerSchema, viewCallerSchema, viewIdSchema } from './view-values';
import { runToolBatchResponseSchema } from './run-tool-batch.v1';

/**
 * `apphost.governed-operations.replay-view.v1`: the cold affordance of a placeholder View. `refresh` (only when the
 * initial call is replay-safe under the profile's replay classification; otherwise FAILED_PRECONDITION
 * `REPLAY_NOT_SAFE`) and `rerun` each run the widget's tool again as a **new** invocation (through the toolset's
 * confirmation policy), appending a new event with a new descriptor, and open a View on it when the call produced
 * one. Never the old binding, never the old idempotency outcome. `invocationId` makes the replay itself idempotent.
 */
export const GovernedReplayView = defineContract({
  service: 'governed-operations',
  operation: 'replay-view',
  version: 1,
  request: z.strictObject({
    caller: viewCallerSchema,
    viewId: viewIdSchema,
    action: z.enum(['refresh', 'rerun']),
    invocationId: z.string().min(1).max(128),
    hostContext: hostContextInputSchema.optional(),
  }),
  response: z.strictObject({
    /** The new event, as a tool batch answers it (its `confirmations` when the policy held the call). */
    event: runToolBatchResponseSchema,
    /** The View of the new widget (a large document by reference, as `open-view` answers it), or null when the call was held or produced no widget. */
    view: openViewAnswerSchema.nullable(),
  }),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION', 'PERMISSION_DENIED', 'CONFLICT', 'UNAVAILABLE', 'OUTCOME_UNKNOWN', 'DEADLINE_EXCEEDED'],
});
