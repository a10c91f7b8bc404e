import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema } from '../../lib/values';
import { messageIdSchema, pendingMessageSchema } from './message-values';

/**
 * `apphost.lifecycle-store.consume-message.v1`: `CLAIMED` → `CONSUMED` by the holder of the live claim, recording the
 * invocation that took it, exactly once. The same token and invocation again answers the same (idempotent);
 * an expired, foreign or superseded claim, or another invocation, is CONFLICT `MESSAGE_CLAIM_INVALID`.
 */
export const LifecycleConsumeMessage = defineContract({
  service: 'lifecycle-store',
  operation: 'consume-message',
  version: 1,
  request: z.strictObject({
    session: sessionKeySchema,
    messageId: messageIdSchema,
    claimToken: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
    invocationId: z.string().min(1).max(128),
  }),
  response: z.strictObject({ message: pendingMessageSchema }),
  errors: ['NOT_FOUND', 'CONFLICT', 'FAILED_PRECONDITION'],
});
