import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema, tenantIdSchema } from '../../lib/values';
import { sessionSnapshotSchema } from './values';

/**
 * `apphost.lifecycle-store.get-session-standing.v1`: the two durable answers a View barrier needs of the lifecycle
 * store, read now and in one request — whether the principal is revoked (`get-principal-revocation`) and the session's
 * lifecycle record (`get-session`; `null` where that answers NOT_FOUND). Both are read fresh on every request (the
 * store reads them concurrently); nothing is cached.
 */
export const LifecycleGetSessionStanding = defineContract({
  service: 'lifecycle-store',
  operation: 'get-session-standing',
  version: 1,
  request: z.strictObject({
    session: sessionKeySchema,
    principal: z.strictObject({ tenant: tenantIdSchema, subject: z.string().min(1).max(256) }),
  }),
  response: z.strictObject({
    revoked: z.boolean(),
    session: sessionSnapshotSchema.nullable(),
  }),
  errors: ['UNAVAILABLE'],
});
