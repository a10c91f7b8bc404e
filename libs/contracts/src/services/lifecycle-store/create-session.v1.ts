import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { creationOperationIdSchema, ledgerEventInputSchema, sessionSnapshotSchema } from './values';

/**
 * `apphost.lifecycle-store.create-session.v1`: the fenced create. Reserves `CREATING(n)` by compare-and-set from
 * the observed (or `expectedPrior`) state, commits the session row, its creation receipt and the finalized imported
 * events in one transaction guarded by the session's fence row, then compares the receipt on the way to `ACTIVE(n)`.
 * The same `creationOperationId` retried returns the same session (and completes an interrupted creation).
 * CONFLICT: another creation holds or won the id, or deletion is in progress (`details.reason`).
 * FAILED_PRECONDITION: `FENCE_RETIRED` (this creator was reclaimed: nothing it wrote landed) or `RECEIPT_MISMATCH`.
 */
export const LifecycleCreateSession = defineContract({
  service: 'lifecycle-store',
  operation: 'create-session',
  version: 1,
  request: z
    .object({
      session: sessionKeySchema,
      creationOperationId: creationOperationIdSchema,
      expectedPrior: z
        .discriminatedUnion('state', [
          z.object({ state: z.literal('ABSENT') }).strict(),
          z.object({ state: z.literal('DELETED'), incarnation: incarnationSchema }).strict(),
        ])
        .optional(),
      importedEvents: z.array(ledgerEventInputSchema).max(500).optional(),
      /** Reclaim an abandoned `CREATING` now instead of waiting for its lease to lapse (retires its creator). */
      reclaim: z.boolean().optional(),
    })
    .strict(),
  response: sessionSnapshotSchema,
  errors: ['INVALID_ARGUMENT', 'CONFLICT', 'FAILED_PRECONDITION'],
});
