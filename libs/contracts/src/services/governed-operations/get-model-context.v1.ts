import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema } from '../../lib/values';
import { viewIdSchema, widgetIdSchema } from './view-values';

/**
 * `apphost.governed-operations.get-model-context.v1`: what the model sees of the session's Views on its next turn —
 * the live registers (`ui/update-model-context`), one per widget (the highest live commit sequence wins), in
 * commit-sequence order, within the profile's per-session budget (whole registers evicted, oldest first, listed
 * in `evicted`). `block` is one user-role text block, delimited and labelled per widget and marked as untrusted
 * data, or null when nothing is live. Reading does not consume. A register of a View that is no longer live
 * (torn down, revoked, rebound, lease run out) never appears.
 */
export const GovernedGetModelContext = defineContract({
  service: 'governed-operations',
  operation: 'get-model-context',
  version: 1,
  request: z.strictObject({ session: sessionKeySchema }),
  response: z.strictObject({
    block: z.strictObject({ role: z.literal('user'), content: z.array(z.strictObject({ type: z.literal('text'), text: z.string() })).length(1) }).nullable(),
    registers: z.array(
      z.strictObject({ widgetId: widgetIdSchema, viewId: viewIdSchema, commitSequence: z.number().int().min(1), bytes: z.number().int().min(0) }),
    ),
    evicted: z.array(widgetIdSchema),
  }),
  errors: ['NOT_FOUND', 'FAILED_PRECONDITION'],
});
