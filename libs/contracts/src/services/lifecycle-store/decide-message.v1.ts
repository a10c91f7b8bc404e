import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema } from '../../lib/values';
import { messageIdSchema, messageRejectionSchema, pendingMessageSchema } from './message-values';

/**
 * `apphost.lifecycle-store.decide-message.v1`: `accept` (`RECORDED` → `ACCEPTED`; idempotent on `ACCEPTED`; an
 * `EXPIRED` or `REJECTED` one is FAILED_PRECONDITION `MESSAGE_NOT_ACCEPTABLE` with `details.state`) or `reject`
 * (any state but `CONSUMED` → `REJECTED` with the reason; idempotent; `CONSUMED` is FAILED_PRECONDITION
 * `MESSAGE_CONSUMED`). Unknown message: NOT_FOUND.
 */
export const LifecycleDecideMessage = defineContract({
  service: 'lifecycle-store',
  operation: 'decide-message',
  version: 1,
  request: z.discriminatedUnion('decision', [
    z.strictObject({ decision: z.literal('accept'), session: sessionKeySchema, messageId: messageIdSchema }),
    z.strictObject({ decision: z.literal('reject'), session: sessionKeySchema, messageId: messageIdSchema, rejection: messageRejectionSchema }),
  ]),
  response: z.strictObject({ message: pendingMessageSchema }),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION'],
});
