import { z } from 'zod';
import { tenantIdSchema } from '@apphost/contracts';

/** `POST /v1/principals:revoke` and `:restore`: the principal as tokens name it (tenant claim and `sub`). */
export const principalIdentityBodySchema = z.strictObject({
  tenant: tenantIdSchema,
  subject: z.string().min(1).max(256),
});

/** The principal's revocation state after the call; `changed` says whether this call changed it. */
export const principalRevocationResponseSchema = z.strictObject({
  tenant: tenantIdSchema,
  subject: z.string(),
  revoked: z.boolean(),
  changed: z.boolean(),
  /** When the current revocation began; null while not revoked. */
  since: z.string().nullable(),
});
export type PrincipalRevocationResponse = z.infer<typeof principalRevocationResponseSchema>;
