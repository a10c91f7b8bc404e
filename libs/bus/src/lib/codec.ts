import { z } from 'zod';
import { errorEnvelopeSchema, type ErrorEnvelope } from '@apphost/contracts';

/** One JSON codec for both transports, so the in-process plane sees exactly the bytes NATS would carry. */
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(decoder.decode(bytes));
}

/** The reply on the wire: a result or exactly one error envelope. */
export const replySchema = z.union([z.object({ ok: z.literal(true), data: z.unknown() }), z.object({ ok: z.literal(false), error: errorEnvelopeSchema })]);
export type Reply = z.infer<typeof replySchema>;

export function okReply(data: unknown): Reply {
  return { ok: true, data };
}

export function errorReply(error: ErrorEnvelope): Reply {
  return { ok: false, error };
}
