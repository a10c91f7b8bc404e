import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { tenantIdSchema } from '../../lib/values';

const principalIdentitySchema = z.strictObject({ tenant: tenantIdSchema, subject: z.string().min(1).max(256) });

/**
 * `apphost.lifecycle-store.set-principal-revocation.v1`: revokes (`revoked: true`) or restores a principal, durably.
 * The session authorizer checks it at every View barrier (open, renew, every View operation): a revoked principal
 * cannot open or use a View, and its live Views are revoked (`PRINCIPAL_REVOKED`) when next touched. Idempotent;
 * `changed` says whether this call changed the state. Only a digest of the subject is stored.
 */
export const LifecycleSetPrincipalRevocation = defineContract({
  service: 'lifecycle-store',
  operation: 'set-principal-revocation',
  version: 1,
  request: z.strictObject({ principal: principalIdentitySchema, revoked: z.boolean() }),
  response: z.strictObject({ revoked: z.boolean(), changed: z.boolean(), since: z.string().nullable() }),
  errors: ['UNAVAILABLE'],
});

/** `apphost.lifecycle-store.get-principal-revocation.v1`: whether a principal is revoked now (and since when). */
export const LifecycleGetPrincipalRevocation = defineContract({
  service: 'lifecycle-store',
  operation: 'get-principal-revocation',
  version: 1,
  request: z.strictObject({ principal: principalIdentitySchema }),
  response: z.strictObject({ revoked: z.boolean(), since: z.string().nullable() }),
  errors: ['UNAVAILABLE'],
});
