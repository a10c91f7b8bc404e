import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { pendingMessageSchema } from './message-values';

/**
 * `apphost.lifecycle-store.record-message.v1`: durably records a `ui/message` as `RECORDED` in the session's
 * current `ACTIVE(incarnation)` (else FAILED_PRECONDITION `STALE_INCARNATION`). Not yet the conversation's: only
 * `decide-message` `accept` makes it visible to runtimes; one never accepted within `acceptWithinMs` becomes `EXPIRED`.
 * Idempotent on `messageId` with identical content (another content: CONFLICT `MESSAGE_ID_REUSED`).
 */
export const LifecycleRecordMessage = defineContract({
  service: 'lifecycle-store',
  operation: 'record-message',
  version: 1,
  request: z.strictObject({
    message: pendingMessageSchema.pick({
      messageId: true,
      session: true,
      incarnation: true,
      role: true,
      content: true,
      viewId: true,
      widgetId: true,
      nonce: true,
      toolsetId: true,
      bindingRevision: true,
      bindingGeneration: true,
      principal: true,
    }),
    acceptWithinMs: z.number().int().min(1_000).max(600_000),
  }),
  response: z.strictObject({ message: pendingMessageSchema }),
  errors: ['FAILED_PRECONDITION', 'CONFLICT', 'NOT_FOUND'],
});
