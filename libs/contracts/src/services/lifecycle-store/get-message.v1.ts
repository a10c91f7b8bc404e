import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema } from '../../lib/values';
import { messageIdSchema, pendingMessageSchema } from './message-values';

/**
 * `apphost.lifecycle-store.get-message.v1`: one pending message of the session's current `ACTIVE` incarnation, as
 * it is now (expiry applied). governed-operations' `claim-message` reads it to re-check what the message depends on
 * before claiming. Unknown message: NOT_FOUND; a message of another incarnation: FAILED_PRECONDITION `STALE_INCARNATION`.
 */
export const LifecycleGetMessage = defineContract({
  service: 'lifecycle-store',
  operation: 'get-message',
  version: 1,
  request: z.strictObject({ session: sessionKeySchema, messageId: messageIdSchema }),
  response: z.strictObject({ message: pendingMessageSchema }),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION'],
});
