import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sealedCascadeRequestSchema } from './purge.v1';

export const sealedRevokeResponseSchema = z.strictObject({ done: z.literal(true) });

/**
 * `apphost.sealed-result-store.revoke.v1`: phase-1 revoke of a deleting incarnation. The store holds no grants, so
 * revoke only fences the incarnation (no new create/commit/resolve for it); bytes go with `purge`. Idempotent.
 */
export const SealedRevoke = defineContract({
  service: 'sealed-result-store',
  operation: 'revoke',
  version: 1,
  request: sealedCascadeRequestSchema,
  response: sealedRevokeResponseSchema,
  errors: ['INVALID_ARGUMENT'],
});
