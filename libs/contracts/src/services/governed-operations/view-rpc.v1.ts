import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { errorCodeSchema, type ErrorCode } from '../../lib/errors';
import { viewCallerSchema, viewGrantSchema, viewIdSchema } from './view-values';

/**
 * `apphost.governed-operations.view-rpc.v1`: one JSON-RPC 2.0 message a View sent (`POST /v1/views/{viewId}/rpc`).
 * Only authentication of the View itself is a bus error: an unknown or foreign View is NOT_FOUND, a wrong grant
 * PERMISSION_DENIED `VIEW_GRANT_INVALID`. Everything after that — a malformed message, a denied or failed operation —
 * is a JSON-RPC answer (`kind: "response"` with `error`), whose `error.data` carries AppHost's `{ code, reason }`.
 *
 * Answers: `response` (HTTP 200, the JSON-RPC response), `accepted` (202: a notification, no body), `cancelled`
 * (204: the View cancelled this request with `notifications/cancelled`; cancellation is not an error, so no
 * JSON-RPC response is ever sent for it).
 */
export const GovernedViewRpc = defineContract({
  service: 'governed-operations',
  operation: 'view-rpc',
  version: 1,
  request: z.strictObject({
    caller: viewCallerSchema,
    viewId: viewIdSchema,
    grant: viewGrantSchema,
    /** The message as parsed from the HTTP body; validated by governed-operations (never trusted as typed). */
    message: z.unknown(),
    /** The HTTP body's size in bytes, checked against the profile's `rpc.maxRequestBytes`. */
    bytes: z.number().int().min(0),
    /** What the user attested on the host page (`X-AppHost-User-Attested`): `message` confirms a `ui/message`. */
    attested: z
      .array(z.enum(['message']))
      .max(4)
      .default([]),
  }),
  response: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('response'), response: z.lazy(() => jsonRpcResponseSchema) }),
    z.strictObject({ kind: z.literal('accepted') }),
    z.strictObject({ kind: z.literal('cancelled') }),
  ]),
  errors: ['NOT_FOUND', 'PERMISSION_DENIED', 'UNAVAILABLE', 'DEADLINE_EXCEEDED'],
});

/** A JSON-RPC id: a string or an integer (null only in a response to an unparseable request). */
export const jsonRpcIdSchema = z.union([z.string().max(256), z.number().int()]);
export type JsonRpcId = z.infer<typeof jsonRpcIdSchema>;

/** `error.data` of every JSON-RPC error AppHost sends: its error code, the closed `reason`, and what else helps. */
export const viewRpcErrorDataSchema = z.looseObject({ code: errorCodeSchema, reason: z.string().nullable(), retryable: z.boolean() });
export type ViewRpcErrorData = z.infer<typeof viewRpcErrorDataSchema>;

export const jsonRpcResponseSchema = z.union([
  z.strictObject({ jsonrpc: z.literal('2.0'), id: jsonRpcIdSchema, result: z.record(z.string(), z.unknown()) }),
  z.strictObject({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcIdSchema.nullable(),
    error: z.strictObject({ code: z.number().int(), message: z.string(), data: viewRpcErrorDataSchema }),
  }),
]);
export type JsonRpcResponse = z.infer<typeof jsonRpcResponseSchema>;

/** The methods a View may send. Requests answer with a JSON-RPC response; notifications with 202. */
export const VIEW_RPC_REQUESTS = [
  'tools/call',
  'resources/read',
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'ui/update-model-context',
  'ui/message',
] as const;
export const VIEW_RPC_NOTIFICATIONS = [
  'notifications/cancelled',
  'notifications/message',
  'ui/notifications/initialized',
  'ui/notifications/size-changed',
  'ui/notifications/request-teardown',
] as const;
export type ViewRpcRequestMethod = (typeof VIEW_RPC_REQUESTS)[number];
export type ViewRpcNotificationMethod = (typeof VIEW_RPC_NOTIFICATIONS)[number];

/** `params._meta` key of the idempotency key of a `tools/call` or `resources/read`. */
export const IDEMPOTENCY_META_KEY = 'io.apphost/idempotency-key';
export const idempotencyKeySchema = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'idempotency key: 1-128 chars of [A-Za-z0-9._-]');

/**
 * JSON-RPC error codes of the View RPC: the protocol's own for protocol failures, and one code per AppHost error
 * code for everything else (`error.data.code` names it; `error.data.reason` says which rule). One table, here.
 */
export const JSON_RPC_PROTOCOL_CODES = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

export const JSON_RPC_CODE_BY_ERROR: Readonly<Record<ErrorCode, number>> = {
  INVALID_ARGUMENT: -32602,
  UNAUTHENTICATED: -32001,
  PERMISSION_DENIED: -32003,
  NOT_FOUND: -32002,
  CONFLICT: -32009,
  FAILED_PRECONDITION: -32004,
  RESOURCE_EXHAUSTED: -32005,
  PAYLOAD_TOO_LARGE: -32006,
  UNAVAILABLE: -32007,
  OUTCOME_UNKNOWN: -32008,
  DEADLINE_EXCEEDED: -32010,
  INTERNAL: -32603,
  DATA_LOSS: -32011,
};

/** Reasons answered with a JSON-RPC protocol code rather than their error code's. */
const PROTOCOL_CODE_BY_REASON: Readonly<Record<string, number>> = {
  RPC_INVALID_REQUEST: JSON_RPC_PROTOCOL_CODES.INVALID_REQUEST,
  RPC_ID_IN_USE: JSON_RPC_PROTOCOL_CODES.INVALID_REQUEST,
  RPC_METHOD_NOT_FOUND: JSON_RPC_PROTOCOL_CODES.METHOD_NOT_FOUND,
  RPC_INVALID_PARAMS: JSON_RPC_PROTOCOL_CODES.INVALID_PARAMS,
  IDEMPOTENCY_KEY_INVALID: JSON_RPC_PROTOCOL_CODES.INVALID_PARAMS,
  TOOL_ARGUMENTS_INVALID: JSON_RPC_PROTOCOL_CODES.INVALID_PARAMS,
};

/** The JSON-RPC `error.code` for an AppHost error: the protocol's code for protocol reasons, else the code table's. */
export function jsonRpcCodeOf(code: ErrorCode, reason: string | null | undefined): number {
  return (reason ? PROTOCOL_CODE_BY_REASON[reason] : undefined) ?? JSON_RPC_CODE_BY_ERROR[code];
}

/** `customMetadata` key of an app audit event's record. */
export const APP_AUDIT_METADATA_KEY = 'io.apphost/app-audit';

/**
 * What an app audit event records of one View operation (an event with `audience: "app_audit"`,
 * `invocationOrigin: "mcp_app"`, `immediateCaller: "app"`): who, what, the decision and its outcome code, never
 * result bytes. `kind: "summary"` is the compaction of older records of one View (counts and outcomes kept).
 */
export const appAuditRecordSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('operation'),
    viewId: viewIdSchema,
    widgetId: z.string(),
    method: z.string().max(128),
    /** The native tool name (`tools/call`), the canonical URI (`resources/read`), else null. */
    tool: z.string().max(256).nullable(),
    uri: z.string().max(2048).nullable(),
    /** `executed`: it reached the server; `denied`: refused after admission (barrier, policy, limits). */
    decision: z.enum(['executed', 'denied']),
    /** `ok`, `cancelled`, or the AppHost error code of the failure. */
    outcome: z.union([z.enum(['ok', 'cancelled']), errorCodeSchema]),
    reason: z.string().max(128).nullable(),
    /** The host-minted function-call id whose sealed result `sealedResultRefs` lists (UI-associated tools only). */
    functionCallId: z.string().max(128).nullable(),
    /** Served from a retained idempotent outcome (nothing ran again). */
    replayed: z.boolean(),
    durationMs: z.number().int().min(0),
    at: z.string(),
  }),
  z.strictObject({
    kind: z.literal('summary'),
    viewId: viewIdSchema,
    /** How many operation records this summary replaced (over all compactions), by decision and outcome. */
    count: z.number().int().min(0),
    byDecision: z.record(z.string(), z.number().int().min(0)),
    byOutcome: z.record(z.string(), z.number().int().min(0)),
    firstAt: z.string(),
    lastAt: z.string(),
  }),
]);
export type AppAuditRecord = z.infer<typeof appAuditRecordSchema>;
