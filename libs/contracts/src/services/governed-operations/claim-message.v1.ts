import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { principalSchema, sessionKeySchema } from '../../lib/values';
import { messageIdSchema, pendingMessageSchema } from '../lifecycle-store/message-values';

/**
 * `apphost.governed-operations.claim-message.v1`: a runtime's claim on an accepted `ui/message`, after re-checking
 * what the message depends on: the session still `ACTIVE` in the message's incarnation, the View opener's principal
 * not revoked, the toolset still bound at the message's binding revision and generation. When one no longer holds,
 * the message becomes `REJECTED` (the reason recorded) and the answer is FAILED_PRECONDITION `MESSAGE_REJECTED`
 * with `details.rejection`. A View's teardown alone does not reject it: an accepted message belongs to the
 * conversation. Otherwise lifecycle-store's `claim-message` answers (CONFLICT `MESSAGE_CLAIMED`, …).
 */
export const GovernedClaimMessage = defineContract({
  service: 'governed-operations',
  operation: 'claim-message',
  version: 1,
  request: z.strictObject({
    principal: principalSchema,
    session: sessionKeySchema,
    messageId: messageIdSchema,
    claimTtlMs: z.number().int().min(1_000).max(3_600_000).default(60_000),
  }),
  response: z.strictObject({ message: pendingMessageSchema, claimToken: z.string(), claimExpiresAt: z.string() }),
  errors: ['NOT_FOUND', 'CONFLICT', 'FAILED_PRECONDITION', 'UNAVAILABLE'],
});
