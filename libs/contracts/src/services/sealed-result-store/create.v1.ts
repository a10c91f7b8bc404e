import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { expectedStoreSchema, operationInstanceIdSchema, sealedCreateResponseSchema, sealedCreateScopeSchema, sealedEnvelopeSchema } from './sealed-values';

/** The longest a PENDING record may wait for its commit before GC may collect it (bounded: 24 h). */
export const pendingTtlMsSchema = z
  .number()
  .int()
  .min(0)
  .max(24 * 60 * 60 * 1000);

export const sealedCreateRequestSchema = z.strictObject({
  scope: sealedCreateScopeSchema,
  /** Minted once per admitted outer request; internal retries reuse it (it is not the replay key). */
  operationInstanceId: operationInstanceIdSchema,
  envelope: sealedEnvelopeSchema,
  pendingTtlMs: pendingTtlMsSchema.optional(),
  expectedStore: expectedStoreSchema.optional(),
});
export type SealedCreateRequest = z.infer<typeof sealedCreateRequestSchema>;

/**
 * `apphost.sealed-result-store.create.v1`: immutable create of a PENDING record, keyed by the operation instance.
 * Same instance + same bytes → the same reference (`created: false`); same instance + other bytes → CONFLICT
 * (reason OPERATION_INSTANCE_CONFLICT), the stored record unchanged. Envelopes larger than one bus message use
 * `create-begin` / `create-chunk` / `create-finish`.
 */
export const SealedCreate = defineContract({
  service: 'sealed-result-store',
  operation: 'create',
  version: 1,
  request: sealedCreateRequestSchema,
  response: sealedCreateResponseSchema,
  errors: ['INVALID_ARGUMENT', 'PAYLOAD_TOO_LARGE', 'CONFLICT', 'FAILED_PRECONDITION'],
});
