import { z } from 'zod';
import { hostProfileSchema, rebindToolsetBodySchema, registryIdSchema, toolsetSpecSchema } from '@apphost/contracts';

export const profileBodySchema = hostProfileSchema;
export const toolsetBodySchema = toolsetSpecSchema;
export const registryIdParamSchema = registryIdSchema;
/** `POST /v1/toolsets/{id}:rebind` body: `{ profileId? }` (strict: an unknown field is a 400). */
export const rebindBodySchema = rebindToolsetBodySchema;

/** `POST /v1/toolsets/{id}:revoke|:rebind` (AIP-style custom methods): the path segment is `<id>:<method>`. */
export const toolsetMethodSchema = z.string().regex(/^([A-Za-z0-9][A-Za-z0-9_-]{0,63}):(revoke|rebind)$/, 'expected <toolsetId>:revoke or <toolsetId>:rebind');
