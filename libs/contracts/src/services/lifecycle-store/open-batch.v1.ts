import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { foundCallEventSchema } from './find-call-event.v1';
import { pendingMessageSchema } from './message-values';

/**
 * `apphost.lifecycle-store.open-batch.v1`: the ledger reads a model tool batch starts with, from one read of the
 * session record — what `get-session` (the ACTIVE incarnation), `find-consumed-message` (the `ui/message` the
 * invocation consumed, if any) and `find-call-event` (`answering: "response"`, of this invocation: the batch's own
 * event when it was already answered) each answer, in one request. A session that is missing or not ACTIVE is
 * NOT_FOUND.
 */
export const LifecycleOpenBatch = defineContract({
  service: 'lifecycle-store',
  operation: 'open-batch',
  version: 1,
  request: z.strictObject({
    session: sessionKeySchema,
    invocationId: z.string().min(1).max(128),
    /** The batch's first function-call id. */
    callId: z.string().min(1).max(128),
  }),
  response: z.strictObject({
    incarnation: incarnationSchema,
    consumedMessage: pendingMessageSchema.nullable(),
    event: foundCallEventSchema.nullable(),
  }),
  errors: ['NOT_FOUND'],
});
