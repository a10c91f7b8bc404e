import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { viewCallerSchema, viewIdSchema } from './view-values';

/**
 * `apphost.governed-operations.close-view.v1`: two-phase teardown. Phase 1 at once (the grant stops working, queued
 * and active operations are cancelled); phase 2 under the session's coordination (View state and its registers
 * removed, its generation reference released, interrupted operations reconciled as a record). Idempotent: closing a
 * closed (or revoked) View answers `closed: false`. A foreign or unknown View is NOT_FOUND.
 */
export const GovernedCloseView = defineContract({
  service: 'governed-operations',
  operation: 'close-view',
  version: 1,
  request: z.strictObject({ caller: viewCallerSchema, viewId: viewIdSchema }),
  response: z.strictObject({ closed: z.boolean() }),
  errors: ['NOT_FOUND', 'UNAVAILABLE'],
});
