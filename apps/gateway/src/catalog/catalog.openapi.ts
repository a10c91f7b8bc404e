import { z } from 'zod';
import { CatalogApproveTool } from '@apphost/contracts';
import { USER_ID_DESCRIPTION } from '../http/request-input';
import { approveBodySchema, publicCatalogSchema } from './catalog.schemas';

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any', io: 'input' });
const ok = (description: string, schema: z.ZodType) => ({ description, content: { 'application/json': { schema: json(schema) } } });
const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });
const path = (name: string, description?: string) => ({
  name,
  in: 'path',
  required: true,
  ...(description ? { description } : {}),
  schema: { type: 'string' },
});
const query = (name: string, required: boolean, description: string) => ({ name, in: 'query', required, description, schema: { type: 'string' } });

/** The catalog routes (catalog-policy behind them). */
export function catalogPaths(): Record<string, unknown> {
  return {
    '/v1/sessions/{sessionId}/catalog': {
      get: {
        summary: "The session's model catalog: model-visible tools only, each with its handle id and, for UI tools, its ui:// resource URI",
        parameters: [
          path('sessionId'),
          query('appName', true, 'The agent app'),
          query('userId', false, USER_ID_DESCRIPTION),
          query('fresh', false, '`true` bypasses the catalog cache'),
        ],
        responses: {
          '200': ok(
            'The catalog. A toolset that could not be discovered (did not start, refused the connection, failed or exceeded a bound while listing) is listed in `unavailable` with its error code, reason and a message naming the cause; its tools are absent and the others are served. Every toolset unavailable is still 200, with no tools',
            publicCatalogSchema,
          ),
          '400': error('Invalid path or query; or FAILED_PRECONDITION: discovery failed closed (a listing failed, or a connection generation is gone)'),
          '401': error('Missing or invalid bearer token'),
          '403': error('The token lacks the runtime scope'),
          '404': error('No such session for this principal, or a named toolset does not exist'),
          '503': error('catalog-policy or the binding registry cannot be reached (not a single toolset failing: that is `unavailable`)'),
          '429': error('A discovery bound was exceeded (no partial catalog)'),
          '504': error('The catalog took too long'),
        },
      },
    },
    '/v1/toolsets/{toolsetId}/tools/{toolMethod}': {
      post: {
        summary: 'Custom method `{toolName}:approve` (admin): approve the quarantined (drifted) definition of a tool; both fingerprints are logged',
        parameters: [path('toolsetId'), path('toolMethod', '`<toolName>:approve`')],
        requestBody: { required: false, content: { 'application/json': { schema: json(approveBodySchema) } } },
        responses: {
          '200': ok('The pins after approval, and what was approved', CatalogApproveTool.response),
          '400': error('Invalid path or body'),
          '401': error('Missing or invalid bearer token'),
          '403': error('The token lacks the admin scope'),
          '404': error('The tool has never been listed'),
          '409': error('The fingerprint is not the current quarantined candidate'),
        },
      },
    },
  };
}
