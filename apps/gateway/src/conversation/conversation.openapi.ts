import { z } from 'zod';
import { USER_ID_DESCRIPTION } from '../http/request-input';
import {
  claimedMessageSchema,
  claimMessageBodySchema,
  consumedMessageSchema,
  consumeMessageBodySchema,
  LISTED_MESSAGE_STATES,
  messagesPageSchema,
  MESSAGES_MAX_WAIT_MS,
  modelContextResponseSchema,
} from './conversation.schemas';

const json = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any', io });
const ok = (description: string, schema: z.ZodType) => ({ description, content: { 'application/json': { schema: json(schema, 'output') } } });
const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });

const sessionIdParam = { name: 'sessionId', in: 'path', required: true, schema: { type: 'string' } };
const appNameQuery = { name: 'appName', in: 'query', required: true, schema: { type: 'string' } };
const userIdQuery = { name: 'userId', in: 'query', required: false, description: USER_ID_DESCRIPTION, schema: { type: 'string' } };
const runtimeErrors = {
  '401': error('Missing or invalid bearer token'),
  '403': error('The token lacks the runtime scope (a view token never reads or takes the conversation)'),
  '404': error("No such session for this principal (another tenant's or user's sessions read as absent), or no such message in it"),
};

/** The conversation routes: model context (governed-operations) and the runtime's side of `ui/message`. */
export function conversationPaths(): Record<string, unknown> {
  return {
    '/v1/sessions/{sessionId}/model-context': {
      get: {
        summary:
          'What the model sees of the session\'s Views on its next turn (`ui/update-model-context`): `block` is one `{ role: "user", content: [{ type: "text", text }] }` — per widget a delimited, labelled section (`[MCP App context — widget <widgetId>, view <viewId>]`) in commit-sequence order, marked as untrusted data, `structuredContent` as canonical JSON — or null when no live View holds a register. `registers` lists the winners (`widgetId`, `viewId`, `commitSequence`, `bytes`); `evicted` the widgets left out whole by the session\'s budget (oldest commit first). Computed from the live Views at every read (a torn-down, revoked or rebound View\'s register never appears); reading consumes nothing. `Cache-Control: no-store`.',
        parameters: [sessionIdParam, appNameQuery, userIdQuery],
        responses: {
          '200': ok('The block, the registers and the evicted widgets', modelContextResponseSchema),
          '400': error('Invalid path or query; or FAILED_PRECONDITION: the session is not ACTIVE'),
          ...runtimeErrors,
          '503': error('governed-operations or the View store is unavailable'),
        },
      },
    },
    '/v1/sessions/{sessionId}/messages': {
      get: {
        summary: `The session's pending \`ui/message\`s of its current incarnation, in creation order, optionally of one state. With \`waitMs\` (0–${MESSAGES_MAX_WAIT_MS}), a long poll: answers as soon as one matches, or an empty page when the wait passed (a request deadline too short for the whole wait shortens it). Expiry applies before answering: an expired claim reads ACCEPTED again. Messages carry their identity (messageId, viewId, widgetId, nonce), content and state; never a claim token. \`Cache-Control: no-store\`.`,
        parameters: [
          sessionIdParam,
          appNameQuery,
          userIdQuery,
          {
            name: 'state',
            in: 'query',
            required: false,
            description: 'Only messages in this state (a runtime waits for ACCEPTED); absent: every state. Another value is 400.',
            schema: { type: 'string', enum: [...LISTED_MESSAGE_STATES] },
          },
          { name: 'waitMs', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: MESSAGES_MAX_WAIT_MS, default: 0 } },
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
        ],
        responses: {
          '200': ok('The messages (possibly none, when the wait passed)', messagesPageSchema),
          '400': error('Invalid path or query (e.g. waitMs over 30000, an unknown state); or FAILED_PRECONDITION: the session is not ACTIVE'),
          ...runtimeErrors,
          '503': error('lifecycle-store is unavailable'),
        },
      },
    },
    '/v1/sessions/{sessionId}/messages/{messageId}': {
      post: {
        summary:
          'Custom methods. `{messageId}:claim` `{ appName, userId?, claimTtlMs? }` (1000–3600000, default 60000): re-checks the session (ACTIVE, the message’s incarnation), the View opener’s principal (not revoked) and the binding (same revision and generation) — when one no longer holds, the message becomes REJECTED (400 FAILED_PRECONDITION `MESSAGE_REJECTED`, `details.rejection`); a View’s teardown alone does not reject it — then takes a fenced, expiring claim: one claimer wins, the answer is the only place the claim token appears. A live claim of another is 409 `MESSAGE_CLAIMED`; a message CONSUMED, EXPIRED or REJECTED is 400 `MESSAGE_NOT_CLAIMABLE`; an expired claim may be claimed again. `{messageId}:consume` `{ appName, userId?, claimToken, invocationId }`: CLAIMED → CONSUMED, recording the invocation (the model turn) that took the message, exactly once; the same token and invocation again answers the same; an expired, foreign or superseded claim, or another invocation, is 409 `MESSAGE_CLAIM_INVALID`. Then run the turn’s tool batch with that `invocationId`: its events are stamped `invocationOrigin: "mcp_app"`. `Cache-Control: no-store`.',
        parameters: [
          sessionIdParam,
          {
            name: 'messageId',
            in: 'path',
            required: true,
            description: '`<messageId>:claim` or `<messageId>:consume`',
            schema: { type: 'string', pattern: '^msg-[0-9a-f]{32}:(claim|consume)$' },
          },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { oneOf: [json(claimMessageBodySchema, 'input'), json(consumeMessageBodySchema, 'input')] } } },
        },
        responses: {
          '200': {
            description: '`:claim`: the message (CLAIMED), the claim token and its expiry. `:consume`: the message (CONSUMED, with its invocationId)',
            content: { 'application/json': { schema: { oneOf: [json(claimedMessageSchema, 'output'), json(consumedMessageSchema, 'output')] } } },
          },
          '400': error(
            'Invalid path or body; or FAILED_PRECONDITION: the message was rejected at claim (MESSAGE_REJECTED, with details.rejection), is not claimable (MESSAGE_NOT_CLAIMABLE, with details.state), or the session is not ACTIVE',
          ),
          ...runtimeErrors,
          '409': error(
            'CONFLICT: another runtime holds a live claim (MESSAGE_CLAIMED); the claim is expired, foreign or superseded, or another invocation consumed it (MESSAGE_CLAIM_INVALID)',
          ),
          '503': error('governed-operations or lifecycle-store is unavailable; nothing changed'),
        },
      },
    },
  };
}
