import { z } from 'zod';
import { defineContract, type BusContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema, type ServiceName } from '../../lib/values';
import { cascadeParticipantNameSchema } from './values';

/** What the deletion cascade sends every participant: the session and the incarnation being deleted. */
export const cascadeRequestSchema = z.object({ session: sessionKeySchema, incarnation: incarnationSchema }).strict();
export type CascadeRequest = z.infer<typeof cascadeRequestSchema>;

/** Participants answer with anything (an object); only success matters. Both operations must be idempotent. */
export const cascadeResponseSchema = z.object({}).passthrough();

export type CascadeOperation = 'revoke' | 'purge';

/**
 * `apphost.<participant>.revoke.v1` / `apphost.<participant>.purge.v1`: the protocol the lifecycle-store's deletion
 * cascade speaks to each configured participant (the sealed-result-store's own contracts use the same request shape).
 * The participant is a name rather than a `ServiceName` so test harnesses can stand up participants of their own.
 */
export function cascadeParticipantContract(
  participant: string,
  operation: CascadeOperation,
): BusContract<typeof cascadeRequestSchema, typeof cascadeResponseSchema> {
  const name = cascadeParticipantNameSchema.parse(participant);
  return defineContract({
    service: name as ServiceName,
    operation,
    version: 1,
    request: cascadeRequestSchema,
    response: cascadeResponseSchema,
    errors: ['FAILED_PRECONDITION'],
  });
}
