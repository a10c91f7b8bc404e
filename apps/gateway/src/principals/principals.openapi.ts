import { z } from 'zod';
import { principalIdentityBodySchema, principalRevocationResponseSchema } from './principals.schemas';

const json = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any', io });
const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });

const revocation = (summary: string) => ({
  post: {
    summary,
    requestBody: { required: true, content: { 'application/json': { schema: json(principalIdentityBodySchema, 'input') } } },
    responses: {
      '200': {
        description: 'The revocation state now; `changed` is false when the principal already was in it (idempotent)',
        content: { 'application/json': { schema: json(principalRevocationResponseSchema, 'output') } },
      },
      '400': error('Invalid body (nothing was done)'),
      '401': error('Missing or invalid bearer token'),
      '403': error('The token lacks the admin scope'),
      '503': error('lifecycle-store cannot be reached (nothing was done; retry)'),
      '504': error('No answer in time: the change may have been made; retrying is safe (idempotent)'),
    },
  },
});

/** The principal revocation routes (admin scope; lifecycle-store behind them). */
export function principalPaths(): Record<string, unknown> {
  return {
    '/v1/principals:revoke': revocation(
      'Revoke a principal `{ tenant, subject }` (admin): it can no longer open or use a View, and its live Views are revoked (`PRINCIPAL_REVOKED`) when next touched. Durable; idempotent.',
    ),
    '/v1/principals:restore': revocation('Restore a revoked principal (admin): it may open and use Views again. Idempotent.'),
  };
}
