import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { messageStateSchema, pendingMessageSchema } from './message-values';

/**
 * `apphost.lifecycle-store.list-messages.v1`: the session's messages of the current incarnation in creation order,
 * the live ones (`ACCEPTED`, `CLAIMED`) before terminal ones (old rows never fill a page ahead of a waiting message),
 * optionally of one state (`RECORDED` is internal: never listed). With `waitMs`, a long poll: answers as soon as
 * one matches, or empty when `waitMs` passed (bounded; within the request's deadline). Expiry is applied before
 * answering, so an expired claim reads `ACCEPTED` again and an overdue message `EXPIRED`.
 */
export const LifecycleListMessages = defineContract({
  service: 'lifecycle-store',
  operation: 'list-messages',
  version: 1,
  request: z.strictObject({
    session: sessionKeySchema,
    incarnation: incarnationSchema.optional(),
    state: messageStateSchema.exclude(['RECORDED']).optional(),
    waitMs: z.number().int().min(0).max(30_000).default(0),
    limit: z.number().int().min(1).max(100).default(50),
  }),
  response: z.strictObject({ incarnation: incarnationSchema, messages: z.array(pendingMessageSchema) }),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION'],
});
