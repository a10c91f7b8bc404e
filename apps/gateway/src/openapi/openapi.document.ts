import { z } from 'zod';
import { describeResponseSchema, errorEnvelopeSchema } from '@apphost/contracts';
import { APPHOST_VERSION } from '@apphost/runtime';

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any' });
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });

/**
 * The gateway's HTTP API as OpenAPI 3.1, generated from the same zod schemas the services validate with.
 * Each issue that adds a route adds it here; the spec test checks every served route is documented.
 */
export function buildOpenApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'AppHost gateway API', version: APPHOST_VERSION, description: 'The only HTTP edge of AppHost: runtime, View, admin and export APIs.' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        ErrorResponse: { type: 'object', required: ['error'], properties: { error: { ...json(errorEnvelopeSchema), properties: { ...(json(errorEnvelopeSchema).properties as object), correlationId: { type: 'string' } } } } },
        Describe: json(describeResponseSchema),
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/healthz': { get: { summary: 'Liveness', security: [], responses: { '200': { description: 'The process is alive' } } } },
      '/readyz': {
        get: { summary: 'Readiness: the bus and every store answer', security: [], responses: { '200': { description: 'Ready' }, '503': { description: 'Not ready' } } },
      },
      '/metrics': { get: { summary: 'Prometheus metrics', security: [], responses: { '200': { description: 'Text exposition format' } } } },
      '/v1/openapi.json': { get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1 document' } } } },
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
