import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { sessionSnapshotSchema } from './values';

/**
 * `apphost.lifecycle-store.delete-session.v1`: CAS to `DELETING(n)`, then the cascade (each participant's `revoke`,
 * the session row and its events, each participant's `purge`), progress durable on the record, then `DELETED(n)`.
 * Idempotent: a retry resumes a partial cascade; a deleted session answers with its `DELETED` view.
 * UNAVAILABLE: a participant failed; progress is recorded and a retry resumes (`details.pending`).
 */
export const LifecycleDeleteSession = defineContract({
  service: 'lifecycle-store',
  operation: 'delete-session',
  version: 1,
  request: z.object({ session: sessionKeySchema, expectedIncarnation: incarnationSchema.optional() }).strict(),
  response: sessionSnapshotSchema,
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION', 'CONFLICT', 'UNAVAILABLE'],
});
