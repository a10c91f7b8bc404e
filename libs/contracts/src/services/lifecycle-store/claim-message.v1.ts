import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema } from '../../lib/values';
import { messageIdSchema, pendingMessageSchema } from './message-values';

/**
 * `apphost.lifecycle-store.claim-message.v1`: a fenced, expiring claim on an `ACCEPTED` message (or a `CLAIMED` one
 * whose claim expired): one claimer wins; a live claim of another is CONFLICT `MESSAGE_CLAIMED`; `CONSUMED`,
 * `EXPIRED` or `REJECTED` is FAILED_PRECONDITION `MESSAGE_NOT_CLAIMABLE` (`details.state`). The token is returned
 * once and stored only as a digest. Callers go through governed-operations' `claim-message`, which re-checks the
 * principal, session and binding first.
 */
export const LifecycleClaimMessage = defineContract({
  service: 'lifecycle-store',
  operation: 'claim-message',
  version: 1,
  request: z.strictObject({ session: sessionKeySchema, messageId: messageIdSchema, claimTtlMs: z.number().int().min(1_000).max(3_600_000) }),
  response: z.strictObject({ message: pendingMessageSchema, claimToken: z.string().regex(/^[A-Za-z0-9_-]{43}$/), claimExpiresAt: z.string() }),
  errors: ['NOT_FOUND', 'CONFLICT', 'FAILED_PRECONDITION'],
});
