import { defineReasons, type ReasonOf } from '../../lib/errors';

/**
 * Every `details.reason` governed-operations raises. Per-call failures (`MIXED_BATCH`, `TOOL_DRIFT`, …) are not
 * errors: they are `error.code` in a function response.
 * - `DUPLICATE_FUNCTION_CALL_ID` (INVALID_ARGUMENT): one id twice in a batch.
 * - `ARGUMENTS_NOT_CANONICAL` (INVALID_ARGUMENT): a call's arguments are not canonical I-JSON within the limits.
 * - `CALL_ID_REUSED` (CONFLICT): the invocation + function-call ids already name a different batch.
 * - `CALL_IN_FLIGHT` (OUTCOME_UNKNOWN): the same batch is still running (or stopped without recording its event).
 * - `EXECUTED_NOT_RECORDED` (OUTCOME_UNKNOWN): a tool ran but its event could not be appended; a retry does not
 *   run it again.
 * - `CONFIRMATION_PERMIT_LOST` (DATA_LOSS): the ledger shows the confirmation was issued, but its permit is gone.
 */
export const GovernedReasons = defineReasons([
  'DUPLICATE_FUNCTION_CALL_ID',
  'ARGUMENTS_NOT_CANONICAL',
  'CALL_ID_REUSED',
  'CALL_IN_FLIGHT',
  'EXECUTED_NOT_RECORDED',
  'CONFIRMATION_PERMIT_LOST',
]);
export type GovernedReason = ReasonOf<typeof GovernedReasons>;
