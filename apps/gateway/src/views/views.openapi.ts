import { z } from 'zod';
import {
  openViewBodySchema,
  renewViewBodySchema,
  renewViewReplySchema,
  replayViewBodySchema,
  replayViewReplySchema,
  viewResponseSchema,
  viewRpcMessageDocSchema,
  viewRpcResponseSchema,
  viewStateSchema,
} from './views.schemas';

const json = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any', io });
const body = (schema: z.ZodType) => ({ required: false, content: { 'application/json': { schema: json(schema, 'input') } } });
const ok = (description: string, schema: z.ZodType) => ({ description, content: { 'application/json': { schema: json(schema, 'output') } } });
const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });

const originNote =
  'A browser route: a present Origin must be on the allowlist (AUTH_ORIGIN_ALLOWLIST; in development also the gateway’s own origin), and a write must carry one (else 403).';
const viewErrors = {
  '401': error('Missing or invalid bearer token (a view token that expired or was tampered with)'),
  '403': error('The token lacks the view scope, or the Origin is missing (on a write) or not allowed'),
};
const viewIdParam = { name: 'viewId', in: 'path', required: true, schema: { type: 'string', pattern: '^vw-[0-9a-f]{32}$' } };
const userIdQuery = {
  name: 'userId',
  in: 'query',
  required: false,
  description: "Defaults to the token's subject; another user only with scope delegate (else 404)",
  schema: { type: 'string' },
};

const grantHeader = (description: string, required: boolean) => ({
  name: 'X-AppHost-View-Grant',
  in: 'header',
  required,
  description,
  schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
});

/** `POST /v1/views/{viewId}/rpc`: HTTP envelopes for authentication, Origin and grant; JSON-RPC for everything else. */
function viewRpcPath(): Record<string, unknown> {
  return {
    post: {
      summary:
        'One JSON-RPC 2.0 message from the View (its MCP Apps bridge): a request (`tools/call`, `resources/read`, `ping`, `tools/list`, `resources/list`, `resources/templates/list`, `ui/update-model-context`, `ui/message` — `{}` only once the message is durably accepted for the conversation) answers 200 with the JSON-RPC response; a notification (`notifications/cancelled`, `notifications/message`, `ui/notifications/initialized`, `ui/notifications/size-changed`, `ui/notifications/request-teardown`) answers 202 with no body; a request the View cancelled (`notifications/cancelled` for its id) answers 204 with no body. Every operation is governed: admitted (structure, published schemas, size, rate, queue depth), re-checked immediately before any effect (session, View, grant, connection generation, binding, the tool’s `app` visibility on the View’s own server, resource policy), executed on the connection that made the View, its result validated, and audited (an `app_audit` event, excluded from model-facing reads). Only authentication, Origin and grant failures are HTTP errors; everything else — a malformed message, a batch array (-32600), an unknown method (-32601), a denied or failed operation — is a JSON-RPC error whose `error.data` carries AppHost’s `{ code, reason, retryable }` (the code table: `docs/view-rpc.md`). A body that is not one UTF-8 JSON value sent as `application/json` is the parse error (-32700, `data.reason` `RPC_INVALID_REQUEST`); the body may be up to 8 MiB (the profile’s `rpc.maxRequestBytes` applies, -32006 `RPC_REQUEST_TOO_LARGE`). The request deadline is GATEWAY_VIEW_RPC_TIMEOUT_MS (default 120 s; `x-apphost-timeout-ms` may shorten it). Answers are `Cache-Control: no-store`. ' +
        originNote,
      parameters: [
        viewIdParam,
        userIdQuery,
        grantHeader('The View grant from the bootstrap (missing or malformed: 403 VIEW_GRANT_INVALID, never echoed)', true),
        {
          name: 'X-AppHost-User-Attested',
          in: 'header',
          required: false,
          description:
            'What the user confirmed on the host page, comma-separated: `message` (a `ui/message`; required when the profile’s `callbackPolicy.message` is `confirm`, the default, else the JSON-RPC error `MESSAGE_CONFIRMATION_REQUIRED`). Another value is 400.',
          schema: { type: 'string', example: 'message' },
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: json(viewRpcMessageDocSchema, 'input') } } },
      responses: {
        '200': ok('The JSON-RPC response: `result`, or `error` with `data: { code, reason, retryable }`', viewRpcResponseSchema),
        '202': { description: 'A notification, accepted; no body' },
        '204': { description: 'The View cancelled this request (`notifications/cancelled`); no JSON-RPC response, no body' },
        '400': error('Invalid path, query or X-AppHost-User-Attested, or a malformed x-apphost-timeout-ms'),
        ...viewErrors,
        '403': error(
          'The grant is missing, wrong or of another View (VIEW_GRANT_INVALID); the token lacks the view scope; the Origin is missing or not allowed',
        ),
        '404': error('No such View for this caller (another tenant’s, user’s or session’s View reads as absent)'),
        '503': error('governed-operations is unavailable; nothing ran'),
        '504': error('The request outlived its deadline (GATEWAY_VIEW_RPC_TIMEOUT_MS or x-apphost-timeout-ms)'),
      },
    },
  };
}

/** The View routes (governed-operations behind them). */
export function viewPaths(): Record<string, unknown> {
  return {
    '/v1/views': {
      post: {
        summary:
          'Bootstraps the View of one widget (the event and function call of a descriptor): the caller, the session (ACTIVE; its incarnation binds the rest) and the widget are authorized, a reference on the exact connection generation that produced the result is reserved, the sealed result is resolved, the `ui://` resource is read once on that generation and exactly one App document selected, and a grant is activated. Live (201): the exact HTML, its `_meta.ui`, the tool input, the full sealed result (not the model projection), the offered host capabilities, the host context, the CSP header and iframe `allow`, and the grant (keep it in the host page; it never appears in the document, context or result). A legacy widget, a missing or corrupt sealed result, a gone generation or a revoked toolset answer the read-only placeholder (200) with its cold action (`refresh` when the call is replay-safe, else `rerun`). ' +
          originNote,
        requestBody: { ...body(openViewBodySchema), required: true },
        responses: {
          '201': ok('Live: the document, tool input and result, CSP and the grant (Cache-Control: no-store)', viewResponseSchema),
          '200': ok('Placeholder: the reason and the cold actions; no HTML, no result, no grant', viewResponseSchema),
          '400': error(
            'Invalid body; or FAILED_PRECONDITION: the read did not yield exactly one App document of the URI (DOCUMENT_NOT_FOUND, DOCUMENT_AMBIGUOUS, DOCUMENT_MIME_MISMATCH, DOCUMENT_ENCODING_INVALID)',
          ),
          ...viewErrors,
          '403': error('The token lacks the view scope, the Origin is missing or not allowed, or the principal was revoked (PRINCIPAL_REVOKED)'),
          '404': error(
            'No such active session, event or widget for this caller (another tenant, user or session — or a view token of another session — reads as absent)',
          ),
          '413': error("The document exceeds the profile's View document limit (DOCUMENT_TOO_LARGE)"),
          '429': error('The connection generation could not take another reference'),
          '503': error('A service the bootstrap needs is unavailable; nothing was kept'),
          '504': error('The bootstrap took too long'),
        },
      },
    },
    '/v1/views/{viewId}': {
      get: {
        summary:
          'The state of one View (ACTIVE, REVOKED with its reason, or CLOSED), its expiry and connection generation; never the grant. Reading it re-checks what revokes a View (toolset revoked or rebound, generation gone, lease expired, principal revoked). ' +
          originNote,
        parameters: [viewIdParam, userIdQuery],
        responses: {
          '200': ok('The View', viewStateSchema),
          '400': error('Invalid path or query'),
          ...viewErrors,
          '404': error('No such View for this caller'),
          '503': error('The View store is unavailable'),
        },
      },
      delete: {
        summary:
          'Closes a View (two-phase teardown: the grant stops working at once; its state is removed and its generation reference released). Idempotent: 204 whether this call closed it or it was closed or revoked already. ' +
          originNote,
        parameters: [viewIdParam, userIdQuery],
        responses: {
          '204': { description: 'Closed (now or before)' },
          '400': error('Invalid path or query'),
          ...viewErrors,
          '404': error('No such View for this caller'),
          '503': error('The View store is unavailable'),
        },
      },
      post: {
        summary:
          'Custom methods. `{viewId}:renew` extends a live View’s lease by the profile’s View lease; the grant goes in the `X-AppHost-View-Grant` header (never the body or URL); body `{ userId? }`. `{viewId}:refresh` (only when the initial call is replay-safe) and `{viewId}:rerun` (effects may repeat) run a placeholder’s tool again as a NEW invocation through the toolset’s confirmation policy, append a new event and open a View on its widget; body `{ invocationId?, hostContext?, userId? }` (without invocationId the replay is keyed by the View and the action, so a repeated click runs nothing again). ' +
          originNote,
        parameters: [
          {
            ...viewIdParam,
            schema: { type: 'string', pattern: '^vw-[0-9a-f]{32}:(renew|refresh|rerun)$' },
            description: '`<viewId>:renew`, `<viewId>:refresh` or `<viewId>:rerun`',
          },
          grantHeader('The View grant (`:renew` only)', false),
        ],
        requestBody: {
          required: false,
          content: { 'application/json': { schema: { oneOf: [json(renewViewBodySchema, 'input'), json(replayViewBodySchema, 'input')] } } },
        },
        responses: {
          '200': {
            description:
              '`:renew`: the View id and its new expiry. `:refresh`/`:rerun`: the new event (as a tool batch answers it) and the View of its widget, or null when the call was held for confirmation or produced none',
            content: { 'application/json': { schema: { oneOf: [json(renewViewReplySchema, 'output'), json(replayViewReplySchema, 'output')] } } },
          },
          '400': error(
            'Invalid path or body; or FAILED_PRECONDITION: the View is no longer live (VIEW_REVOKED, with details.revocation), is not a placeholder (VIEW_NOT_PLACEHOLDER), or refresh of a call that is not replay-safe (REPLAY_NOT_SAFE)',
          ),
          ...viewErrors,
          '403': error(
            'The grant is missing, wrong or of another View (VIEW_GRANT_INVALID); the principal was revoked (PRINCIPAL_REVOKED); or the token lacks the view scope or the Origin is not allowed',
          ),
          '404': error('No such View for this caller'),
          '409': error('This invocationId already names another replay'),
          '503': error('A service the operation needs is unavailable'),
          '504': error(
            'The replay took too long, or OUTCOME_UNKNOWN: its tool ran but the event could not be recorded (a retry with the same invocationId never runs it again)',
          ),
        },
      },
    },
    '/v1/views/{viewId}/rpc': viewRpcPath(),
  };
}
