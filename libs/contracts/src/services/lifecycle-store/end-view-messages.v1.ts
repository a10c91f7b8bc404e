import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema } from '../../lib/values';
import { viewIdSchema } from '../governed-operations/view-values';
import { messageRejectionSchema } from './message-values';

/**
 * `apphost.lifecycle-store.end-view-messages.v1`: the fence a View's teardown puts in front of its pending messages.
 * One statement stores a tombstone for the View (idempotent: the first `rejection` stays) and makes its `RECORDED`
 * messages `REJECTED` with `rejection` (why the View ended, default `VIEW_TORN_DOWN`); from then on
 * `decide-message accept` of any message of that View rejects it so instead (an
 * accept committed before the fence stands: that message already belongs to the conversation). Answered in any
 * session state: a session that is not `ACTIVE` accepts nothing anyway, and its purge drops the tombstones.
 */
export const LifecycleEndViewMessages = defineContract({
  service: 'lifecycle-store',
  operation: 'end-view-messages',
  version: 1,
  request: z.strictObject({ session: sessionKeySchema, viewId: viewIdSchema, rejection: messageRejectionSchema.default('VIEW_TORN_DOWN') }),
  /** `rejected`: how many `RECORDED` messages this call rejected (0 on a repeat). */
  response: z.strictObject({ rejected: z.number().int().min(0) }),
  errors: [],
});
