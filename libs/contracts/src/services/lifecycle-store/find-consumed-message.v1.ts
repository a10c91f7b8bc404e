import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema } from '../../lib/values';
import { pendingMessageSchema } from './message-values';

/**
 * `apphost.lifecycle-store.find-consumed-message.v1`: the message an invocation consumed, if any (the finalizer
 * stamps that invocation's events `invocationOrigin: "mcp_app"`).
 */
export const LifecycleFindConsumedMessage = defineContract({
  service: 'lifecycle-store',
  operation: 'find-consumed-message',
  version: 1,
  request: z.strictObject({ session: sessionKeySchema, invocationId: z.string().min(1).max(128) }),
  response: z.strictObject({ message: pendingMessageSchema.nullable() }),
  errors: ['NOT_FOUND'],
});
