import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { principalSchema, sessionKeySchema } from '../../lib/values';
import { confirmationIdSchema, runToolBatchResponseSchema } from './run-tool-batch.v1';

/**
 * `apphost.governed-operations.decide-confirmation.v1`: the user's decision on one sealed confirmation permit.
 * The permit is taken exactly once (a second decision is NOT_FOUND) and the policy is not evaluated again.
 * Approved: the call runs with the sealed arguments, on a fresh classification that must still match the tool
 * identity, server and binding revision the permit was bound to (else a `CONFIRMATION_STALE` error response,
 * nothing runs). Denied or expired: a terminal error response, nothing runs. Either way ONE event is appended
 * whose function response carries the original function-call id. NOT_FOUND also covers another session's permit
 * and a session that is gone or was recreated since (the permit belongs to its incarnation). A permit the ledger
 * proves was issued (its `adk_request_confirmation` event) and not decided, but that the coordination store lost,
 * is DATA_LOSS (`CONFIRMATION_PERMIT_LOST`): nothing ran, ask the model again. A failure to record the decision
 * after the call ran is OUTCOME_UNKNOWN (`EXECUTED_NOT_RECORDED`).
 */
export const GovernedDecideConfirmation = defineContract({
  service: 'governed-operations',
  operation: 'decide-confirmation',
  version: 1,
  request: z.strictObject({
    principal: principalSchema,
    session: sessionKeySchema.strict(),
    confirmationId: confirmationIdSchema,
    confirmed: z.boolean(),
  }),
  response: runToolBatchResponseSchema,
  errors: ['INVALID_ARGUMENT', 'NOT_FOUND', 'FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED', 'OUTCOME_UNKNOWN', 'DATA_LOSS', 'UNAVAILABLE'],
});
