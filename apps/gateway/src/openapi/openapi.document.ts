import { z } from 'zod';
import { describeResponseSchema, errorEnvelopeSchema } from '@apphost/contracts';
import { createSessionBodySchema, EVENTS_AUDIENCES, eventsPageSchema, publicSessionSchema } from '../sessions/sessions.schemas';
import { APPHOST_VERSION } from '@apphost/runtime';
import { USER_ID_DESCRIPTION } from '../http/request-input';
import { principalPaths } from '../principals/principals.openapi';
import { viewTokenPaths } from '../sessions/view-tokens.openapi';
import { adminPaths } from '../admin/admin.openapi';
import { catalogPaths } from '../catalog/catalog.openapi';
import { toolBatchPaths } from '../tool-batches/tool-batches.openapi';
import { exportPaths } from '../exports/exports.openapi';
import { viewPaths } from '../views/views.openapi';
import { conversationPaths } from '../conversation/conversation.openapi';

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any' });
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });

/**
 * The gateway's HTTP API as OpenAPI 3.1, generated from the same zod schemas the services validate with.
 * A route the gateway serves is added here with it; the spec test checks every served route is documented.
 */
export function buildOpenApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'AppHost gateway API',
      version: APPHOST_VERSION,
      description:
        'The only HTTP edge of AppHost: runtime, View, admin and export APIs. Every request may carry `x-correlation-id` ' +
        '(echoed in the response and in every service log line), a W3C `traceparent` (parent of the request trace) and ' +
        '`x-apphost-timeout-ms`, a positive integer that shortens the request deadline (HTTP_REQUEST_TIMEOUT_MS) bounding ' +
        'every service hop; a malformed one is 400 INVALID_ARGUMENT. A request that outlives its deadline answers 504 OUTCOME_UNKNOWN.',
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'An organisation JWT (or, in development, the local dev token) with scopes among admin, runtime, view, delegate, export and audit; or a view token from POST /v1/sessions/{sessionId}/view-tokens (scope view, one session).',
        },
      },
      schemas: {
        ErrorResponse: {
          type: 'object',
          required: ['error'],
          properties: {
            error: { ...json(errorEnvelopeSchema), properties: { ...(json(errorEnvelopeSchema).properties as object), correlationId: { type: 'string' } } },
          },
        },
        Describe: json(describeResponseSchema),
        CreateSession: json(createSessionBodySchema),
        Session: json(publicSessionSchema),
        EventsPage: json(eventsPageSchema),
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/healthz': { get: { summary: 'Liveness', security: [], responses: { '200': { description: 'The process is alive' } } } },
      '/readyz': {
        get: {
          summary: 'Readiness: the bus is connected and every service the gateway routes to answers (listed per service in `services`)',
          security: [],
          responses: { '200': { description: 'Ready' }, '503': { description: 'Not ready' } },
        },
      },
      '/metrics': { get: { summary: 'Prometheus metrics', security: [], responses: { '200': { description: 'Text exposition format' } } } },
      '/v1/openapi.json': { get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1 document' } } } },
      ...sessionPaths(),
      ...viewTokenPaths(),
      ...adminPaths(),
      ...principalPaths(),
      ...catalogPaths(),
      ...toolBatchPaths(),
      ...exportPaths(),
      ...viewPaths(),
      ...conversationPaths(),
      '/v1/services': {
        get: {
          summary: "Every service's describe (admin scope)",
          responses: {
            '200': {
              description: 'One entry per service: its describe, or the typed error that prevented it',
              content: { 'application/json': { schema: { type: 'object', properties: { services: { type: 'array', items: { type: 'object' } } } } } },
            },
            '401': errorResponse('Missing or invalid bearer token'),
            '403': errorResponse('The token lacks the admin scope'),
          },
        },
      },
    },
  };
}

const ref = (name: string) => ({ content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } });
const sessionIdParam = { name: 'sessionId', in: 'path', required: true, schema: { type: 'string' } };
const appNameParam = { name: 'appName', in: 'query', required: true, schema: { type: 'string' } };
const userIdParam = {
  name: 'userId',
  in: 'query',
  required: false,
  description: USER_ID_DESCRIPTION,
  schema: { type: 'string' },
};
const sessionErrors = {
  '400': errorResponse('Invalid path, query or body (nothing was done)'),
  '401': errorResponse('Missing or invalid bearer token'),
  '403': errorResponse('The token lacks the runtime scope'),
  '404': errorResponse("No such session for this principal (another tenant's or user's sessions read as absent)"),
};

/** The runtime API's session routes (lifecycle-store behind them). */
function sessionPaths(): Record<string, unknown> {
  return {
    '/v1/sessions': {
      post: {
        summary: 'Create a session (fenced, idempotent per creationOperationId); sessionId and creationOperationId default to fresh UUIDs',
        requestBody: { required: true, ...ref('CreateSession') },
        responses: {
          '201': { description: 'The session, ACTIVE at its new incarnation', ...ref('Session') },
          ...sessionErrors,
          '409': errorResponse('The id is taken: it exists, is being created by another operation, or is being deleted'),
          '400': errorResponse('Invalid path, query or body; or FAILED_PRECONDITION: this creation was reclaimed (FENCE_RETIRED) or could not be activated'),
        },
      },
    },
    '/v1/sessions/{sessionId}': {
      get: {
        summary: 'A session of the calling principal',
        parameters: [sessionIdParam, appNameParam, userIdParam],
        responses: { '200': { description: 'The session', ...ref('Session') }, ...sessionErrors },
      },
      delete: {
        summary: 'Delete a session: DELETING, the cascade, then DELETED (idempotent; a retry resumes a partial cascade)',
        parameters: [sessionIdParam, appNameParam, userIdParam],
        responses: {
          '200': { description: 'The final state (DELETED)', ...ref('Session') },
          ...sessionErrors,
          '400': errorResponse('Invalid path or query; or FAILED_PRECONDITION: the session is still being created'),
          '503': errorResponse('A cascade participant failed; progress is recorded and a retry resumes'),
        },
      },
    },
    '/v1/sessions/{sessionId}/events': {
      get: {
        summary: "One page of the session's event ledger (public serialization: no sealed bytes, digests or grants)",
        parameters: [
          sessionIdParam,
          appNameParam,
          userIdParam,
          { name: 'afterId', in: 'query', required: false, schema: { type: 'integer', minimum: 0 } },
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 500 } },
          {
            name: 'audience',
            in: 'query',
            required: false,
            description:
              '`model` (default): what a model may see, without app audit events (`audience: "app_audit"`: one per View operation); `all`: every event, app audit events included. Another value is 400.',
            schema: { type: 'string', enum: [...EVENTS_AUDIENCES], default: 'model' },
          },
        ],
        responses: {
          '200': { description: 'Events in id order (app audit events only with audience=all); nextAfterId is null on the last page', ...ref('EventsPage') },
          ...sessionErrors,
        },
      },
    },
  };
}
