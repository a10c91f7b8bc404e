import { z } from 'zod';
import { hostProfileSchema, keyRingStatusSchema, rebindToolsetBodySchema, toolsetSpecSchema, toolsetStatusSchema } from '@apphost/contracts';

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any', io: 'input' });
const body = (schema: z.ZodType) => ({ required: true, content: { 'application/json': { schema: json(schema) } } });
const ok = (description: string, schema: z.ZodType) => ({ description, content: { 'application/json': { schema: json(schema) } } });
const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });
const adminErrors = {
  '400': error('Invalid path or body (nothing was done)'),
  '401': error('Missing or invalid bearer token'),
  '403': error('The token lacks the admin scope'),
};
const idParam = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });

/** The admin routes of the binding registry, from the same zod schemas the registry validates with. */
export function adminPaths(): Record<string, unknown> {
  return {
    '/v1/profiles/{profileId}': {
      put: {
        summary: 'Store an immutable host profile (same content: idempotent; other content: 409)',
        parameters: [idParam('profileId')],
        requestBody: body(hostProfileSchema),
        responses: {
          '200': ok('Stored', z.object({ profileId: z.string(), created: z.boolean(), fingerprint: z.string() })),
          ...adminErrors,
          '409': error('The id holds another profile'),
        },
      },
    },
    '/v1/toolsets/{toolsetId}': {
      put: {
        summary: 'Store an immutable toolset spec and materialize its binding (stdio only where the deployment allows it)',
        parameters: [idParam('toolsetId')],
        requestBody: body(toolsetSpecSchema),
        responses: {
          '200': ok('Stored; the binding status', z.object({ created: z.boolean(), status: toolsetStatusSchema })),
          ...adminErrors,
          '404': error('The referenced profile does not exist'),
          '409': error('The id holds another spec'),
        },
      },
      get: {
        summary: 'Binding state, binding generation and readiness per provider',
        parameters: [idParam('toolsetId')],
        responses: { '200': ok('The status', toolsetStatusSchema), ...adminErrors, '404': error('No such toolset') },
      },
      post: {
        summary:
          'Custom methods `{toolsetId}:revoke` (REVOKING → CLOSED, advertising connections closed) and `{toolsetId}:rebind` (a new binding generation, optionally under another stored profile)',
        parameters: [{ ...idParam('toolsetId'), description: '`<toolsetId>:revoke` or `<toolsetId>:rebind`' }],
        requestBody: {
          required: false,
          description: '`:rebind` only: `profileId` names another stored profile to bind to (absent: the current profile). `:revoke` takes no body.',
          content: { 'application/json': { schema: json(rebindToolsetBodySchema) } },
        },
        responses: {
          '200': ok('The status after the method', toolsetStatusSchema),
          ...adminErrors,
          '404': error('No such toolset, or (`:rebind`) no such profile: nothing was done'),
          '409': error('A concurrent rebind won'),
        },
      },
    },
    '/v1/keys:rotate': {
      post: {
        summary: 'Rotate the binding-revision key ring: a new signing key; the previous one verifies for a bounded window. Key ids only.',
        responses: { '200': ok('The key ring', keyRingStatusSchema), ...adminErrors, '409': error('A concurrent rotation won') },
      },
    },
  };
}
