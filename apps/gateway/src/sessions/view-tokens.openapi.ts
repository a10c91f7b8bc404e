import { z } from 'zod';
import { VIEW_TOKEN_AUDIENCE, VIEW_TOKEN_ISSUER } from '../auth/view-tokens';
import { viewTokenBodySchema, viewTokenResponseSchema } from './view-tokens.schemas';

const json = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any', io });
const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });

/** The view-token route (lifecycle-store checks the session; the gateway signs). */
export function viewTokenPaths(): Record<string, unknown> {
  return {
    '/v1/sessions/{sessionId}/view-tokens': {
      post: {
        summary:
          `Mint a view token for one ACTIVE session (runtime scope): a short-lived bearer token (default 300 s, at most 900 s) whose principal is the session's user with scope \`view\` only, restricted to this session (any other session reads as 404; a runtime route answers 403, so it cannot mint another). ` +
          `An HS256 JWT signed with the gateway's own key (issuer \`${VIEW_TOKEN_ISSUER}\`, audience \`${VIEW_TOKEN_AUDIENCE}\`): never taken for an organisation token. ` +
          "Allowed for the session's own user, or a principal with scope `delegate` naming the user in `userId`.",
        parameters: [{ name: 'sessionId', in: 'path', required: true, schema: { type: 'string' } }],
        requestBody: { required: true, content: { 'application/json': { schema: json(viewTokenBodySchema, 'input') } } },
        responses: {
          '201': { description: 'The token and when it expires', content: { 'application/json': { schema: json(viewTokenResponseSchema, 'output') } } },
          '400': error('Invalid path or body (e.g. ttlSeconds over 900); nothing was minted'),
          '401': error('Missing or invalid bearer token'),
          '403': error('The token lacks the runtime scope (a view token never mints another)'),
          '404': error('No such ACTIVE session for this principal: absent, being created or deleted, or another user named without `delegate`'),
          '503': error('lifecycle-store cannot be reached'),
        },
      },
    },
  };
}
