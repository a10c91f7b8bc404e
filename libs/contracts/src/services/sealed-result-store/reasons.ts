import { defineReasons, type ReasonOf } from '../../lib/errors';

/** Every `details.reason` the sealed-result store and its client raise. `max-bytes` keeps its historical spelling. */
export const SealedReasons = defineReasons([
  'STORE_MISMATCH',
  'STALE_INCARNATION',
  'max-bytes',
  'ENVELOPE_INVALID',
  'CORRELATION_MISMATCH',
  'OPERATION_INSTANCE_CONFLICT',
  'EVENT_CONFLICT',
  'UPLOAD_NOT_FOUND',
  'UPLOAD_INCOMPLETE',
  'CHUNK_OUT_OF_RANGE',
  'CHUNK_CONFLICT',
  'CHUNK_SIZE',
  'DIGEST_MISMATCH',
  'LEDGER_UNAVAILABLE',
]);
export type SealedReason = ReasonOf<typeof SealedReasons>;
