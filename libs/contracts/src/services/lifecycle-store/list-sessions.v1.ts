import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { appNameSchema, incarnationSchema, sessionIdSchema, tenantIdSchema, userIdSchema } from '../../lib/values';
import { sessionStateSchema } from './values';

/** One of a user's sessions, as a chooser lists it (no events, no cascade detail). */
export const sessionSummarySchema = z.strictObject({
  sessionId: sessionIdSchema,
  incarnation: incarnationSchema,
  state: sessionStateSchema,
  createdAt: z.string(),
});
export type SessionSummary = z.infer<typeof sessionSummarySchema>;

/**
 * `apphost.lifecycle-store.list-sessions.v1`: the sessions of one tenant, app and user that are not DELETED, newest
 * first, at most `limit`. Never another user's: the owner is the whole key prefix of the query.
 */
export const LifecycleListSessions = defineContract({
  service: 'lifecycle-store',
  operation: 'list-sessions',
  version: 1,
  request: z.strictObject({
    owner: z.strictObject({ tenant: tenantIdSchema, appName: appNameSchema, userId: userIdSchema }),
    limit: z.number().int().min(1).max(200).default(100),
  }),
  response: z.strictObject({ sessions: z.array(sessionSummarySchema) }),
  errors: ['INVALID_ARGUMENT', 'UNAVAILABLE'],
});
