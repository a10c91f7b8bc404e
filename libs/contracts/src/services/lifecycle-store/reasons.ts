import { defineReasons, type ReasonOf } from '../../lib/errors';

/** Every `details.reason` lifecycle-store raises (the README's operation table lists which operation raises which). */
export const LifecycleReasons = defineReasons([
  'ALREADY_EXISTS',
  'CREATE_IN_PROGRESS',
  'DELETION_IN_PROGRESS',
  'UNEXPECTED_PRIOR_STATE',
  'CREATION_SUPERSEDED',
  'CREATION_OPERATION_REUSED',
  'CONTENDED',
  'FENCE_RETIRED',
  'RECEIPT_MISMATCH',
  'SESSION_CREATING',
  'STALE_INCARNATION',
  'STALE_FENCING_TOKEN',
  'DUPLICATE_FUNCTION_CALL_ID',
  'UNMATCHED_SEALED_RESULT_REF',
  'DUPLICATE_SEALED_RESULT_REF',
  // Pending `ui/message`s (record, decide, claim, consume):
  'MESSAGE_ID_REUSED',
  'MESSAGE_NOT_ACCEPTABLE',
  'MESSAGE_CONSUMED',
  'MESSAGE_CLAIMED',
  'MESSAGE_NOT_CLAIMABLE',
  'MESSAGE_CLAIM_INVALID',
]);
export type LifecycleReason = ReasonOf<typeof LifecycleReasons>;
