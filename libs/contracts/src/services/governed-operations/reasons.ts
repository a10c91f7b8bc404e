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
 * - `VIEW_GRANT_INVALID` (PERMISSION_DENIED): the View grant is missing, wrong, or of another View.
 * - `VIEW_REVOKED` (FAILED_PRECONDITION): the View is no longer live; `details.revocation` says why.
 * - `PRINCIPAL_REVOKED` (PERMISSION_DENIED): the caller's principal was revoked by an admin.
 * - `DOCUMENT_NOT_FOUND`, `DOCUMENT_AMBIGUOUS`, `DOCUMENT_MIME_MISMATCH`, `DOCUMENT_ENCODING_INVALID`
 *   (FAILED_PRECONDITION), `DOCUMENT_TOO_LARGE` (PAYLOAD_TOO_LARGE): the `resources/read` of a bootstrap did not
 *   yield exactly one App document of the descriptor's URI within the profile's limit.
 * - `REPLAY_NOT_SAFE` (FAILED_PRECONDITION): `refresh` of a call the replay classification does not call replay-safe.
 * - `VIEW_NOT_PLACEHOLDER` (FAILED_PRECONDITION): `refresh`/`rerun` of a live View.
 */
export const GovernedReasons = defineReasons([
  'DUPLICATE_FUNCTION_CALL_ID',
  'ARGUMENTS_NOT_CANONICAL',
  'CALL_ID_REUSED',
  'CALL_IN_FLIGHT',
  'EXECUTED_NOT_RECORDED',
  'CONFIRMATION_PERMIT_LOST',
  'VIEW_GRANT_INVALID',
  'VIEW_REVOKED',
  'PRINCIPAL_REVOKED',
  'DOCUMENT_NOT_FOUND',
  'DOCUMENT_AMBIGUOUS',
  'DOCUMENT_MIME_MISMATCH',
  'DOCUMENT_ENCODING_INVALID',
  'DOCUMENT_TOO_LARGE',
  'REPLAY_NOT_SAFE',
  'VIEW_NOT_PLACEHOLDER',
]);
export type GovernedReason = ReasonOf<typeof GovernedReasons>;
