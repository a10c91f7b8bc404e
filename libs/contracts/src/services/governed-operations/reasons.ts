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
 *
 * View RPC (`view-rpc.v1`; the JSON-RPC code each maps to is in `jsonRpcCodeOf`):
 * - `RPC_INVALID_REQUEST` (INVALID_ARGUMENT, -32600): not one JSON-RPC 2.0 request or notification (a batch array,
 *   a missing `jsonrpc`, a `null` or fractional id, a top-level member too many); params failing the method's
 *   published MCP / MCP Apps schema are `RPC_INVALID_PARAMS`.
 * - `RPC_ID_IN_USE` (INVALID_ARGUMENT, -32600): a second live request with an equal id on one View generation.
 * - `RPC_METHOD_NOT_FOUND` (NOT_FOUND, -32601): a method the View RPC does not serve.
 * - `RPC_INVALID_PARAMS` (INVALID_ARGUMENT, -32602): the params of a served method are malformed.
 * - `IDEMPOTENCY_KEY_INVALID` (INVALID_ARGUMENT, -32602): `_meta["io.apphost/idempotency-key"]` is not 1-128 chars of `[A-Za-z0-9._-]`.
 * - `TOOL_ARGUMENTS_INVALID` (INVALID_ARGUMENT, -32602): the arguments fail the tool's `inputSchema` (or it cannot be compiled: fail closed).
 * - `RPC_REQUEST_TOO_LARGE` (PAYLOAD_TOO_LARGE): the message exceeds the profile's `rpc.maxRequestBytes`.
 * - `RPC_RATE_LIMITED`, `RPC_QUEUE_FULL` (RESOURCE_EXHAUSTED, retryable): per-View / per-session rate, or queue depth.
 * - `TOOL_NOT_APP_VISIBLE` (PERMISSION_DENIED): the tool is unknown on the View's server, not `app`-visible now, or
 *   excluded by the profile's app-call policy (a tool of another server or toolset is always unknown here).
 * - `IDEMPOTENCY_KEY_CONFLICT` (CONFLICT): the key was used for a different operation identity.
 * - `IDEMPOTENT_OUTCOME_NOT_RETAINED` (FAILED_PRECONDITION): the key's operation ran, but its outcome was too large
 *   to retain; it is not run again.
 * - `TOOL_RESULT_INVALID` (FAILED_PRECONDITION): the server's `CallToolResult` failed validation (nothing delivered).
 *
 * Conversation (`ui/update-model-context`, `ui/message`, `claim-message`):
 * - `MODALITY_NOT_ADVERTISED` (INVALID_ARGUMENT, -32602): content of a kind the bootstrap did not advertise.
 * - `REGISTER_TOO_LARGE` (PAYLOAD_TOO_LARGE): the update exceeds the profile's per-register cap (never truncated).
 * - `CONTEXT_UPDATE_STALE` (FAILED_PRECONDITION): a newer update of the View committed first, or the View stopped
 *   being live before the commit: nothing changed.
 * - `MESSAGE_CONFIRMATION_REQUIRED` (PERMISSION_DENIED): the profile's `message` policy is `confirm` and the host page
 *   did not relay the user's confirmation (`X-AppHost-User-Attested: message`).
 * - `MESSAGE_TOO_LARGE` (PAYLOAD_TOO_LARGE): a `ui/message`'s text exceeds the host's message size limit.
 * - `MESSAGE_REJECTED` (FAILED_PRECONDITION): at claim time the session, principal or binding no longer holds.
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
  'RPC_INVALID_REQUEST',
  'RPC_ID_IN_USE',
  'RPC_METHOD_NOT_FOUND',
  'RPC_INVALID_PARAMS',
  'IDEMPOTENCY_KEY_INVALID',
  'TOOL_ARGUMENTS_INVALID',
  'RPC_REQUEST_TOO_LARGE',
  'RPC_RATE_LIMITED',
  'RPC_QUEUE_FULL',
  'TOOL_NOT_APP_VISIBLE',
  'IDEMPOTENCY_KEY_CONFLICT',
  'IDEMPOTENT_OUTCOME_NOT_RETAINED',
  'TOOL_RESULT_INVALID',
  'MODALITY_NOT_ADVERTISED',
  'REGISTER_TOO_LARGE',
  'CONTEXT_UPDATE_STALE',
  'MESSAGE_CONFIRMATION_REQUIRED',
  'MESSAGE_REJECTED',
  'MESSAGE_TOO_LARGE',
]);
export type GovernedReason = ReasonOf<typeof GovernedReasons>;
