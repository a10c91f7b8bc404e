import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { viewCallerSchema, viewIdSchema, viewSnapshotSchema } from './view-values';

/**
 * `apphost.governed-operations.get-view.v1`: the owner's view of one View (state, expiry, generation; never the
 * grant). Reading it re-checks what can revoke a View lazily (toolset revoked or rebound, generation gone, lease
 * expired, principal revoked), so the state is current. A foreign or unknown View is NOT_FOUND.
 */
export const GovernedGetView = defineContract({
  service: 'governed-operations',
  operation: 'get-view',
  version: 1,
  request: z.strictObject({ caller: viewCallerSchema, viewId: viewIdSchema }),
  response: viewSnapshotSchema,
  errors: ['NOT_FOUND', 'UNAVAILABLE'],
});
