import { z } from 'zod';
import { exportBodySchema, exportReplySchema, exportsPageSchema } from './exports.schemas';

const json = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any', io });
const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });

/** The export routes (export-audit behind them). */
export function exportPaths(): Record<string, unknown> {
  return {
    '/v1/exports': {
      post: {
        summary:
          "Exports one sealed result of the caller's own session (export scope) as ONE materialized JSON body: `content` (the model projection), `structured` (structuredContent) or `full` (the whole CallToolResult), as the bound profile's export policy allows. Authorized, rechecked immediately before release and audited (one row per operationId); never HTML, never a View grant. The same operationId with the same target answers the same record (a released export released again counts the release); another target is 409; a denial is final.",
        requestBody: { required: true, content: { 'application/json': { schema: json(exportBodySchema, 'input') } } },
        responses: {
          '200': {
            description: 'Released: the export id, release count, byte count and the projected result',
            content: { 'application/json': { schema: json(exportReplySchema, 'output') } },
          },
          '400': error(
            'Invalid body; or FAILED_PRECONDITION, denied: the session, its incarnation, the binding or its key changed, or this operation was denied before',
          ),
          '401': error('Missing or invalid bearer token'),
          '403': error('The token lacks the export scope, the principal was revoked (PRINCIPAL_REVOKED), or the profile does not allow the projection'),
          '404': error('No such session, event, function call or sealed result for this principal (a foreign locator reads as absent)'),
          '406': error('Accept: text/event-stream (INVALID_ARGUMENT, reason STREAMING_NOT_SUPPORTED): exports are never streamed'),
          '409': error('The operationId names another export (OPERATION_REUSED)'),
          '413': error("The projection exceeds the profile's export byte limit"),
          '429': error('The per-principal rate limit or the session bulk cap was reached'),
          '503': error('The audit store is unavailable (reason AUDIT_UNAVAILABLE): nothing was released'),
        },
      },
      get: {
        summary:
          "The redacted audit rows of one session of the caller's tenant (audit or admin scope; any user via userId): targets, decision, status, reason, byte and release counts, timestamps and retention. Never content, never the principal.",
        parameters: [
          { name: 'appName', in: 'query', required: true, schema: { type: 'string' } },
          { name: 'sessionId', in: 'query', required: true, schema: { type: 'string' } },
          { name: 'userId', in: 'query', required: false, schema: { type: 'string' } },
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 500 } },
        ],
        responses: {
          '200': { description: 'The rows, oldest first', content: { 'application/json': { schema: json(exportsPageSchema, 'output') } } },
          '400': error('Invalid query'),
          '401': error('Missing or invalid bearer token'),
          '403': error('The token has neither the audit nor the admin scope'),
        },
      },
    },
  };
}
