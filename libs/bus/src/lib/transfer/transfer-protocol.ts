import { z } from 'zod';

/**
 * The wire protocol of a chunked reply. A reply too large for one message is parked by the server that produced
 * it; the requester gets a small transfer envelope and reads the bytes in chunks from that server process. The
 * reply kind travels in a header the bus server alone sets (handlers return data, never headers), so no handler
 * result can ever be taken for an envelope or a chunk.
 */
export const HEADER_REPLY_KIND = 'apphost-reply';
export const REPLY_KIND_TRANSFER = 'transfer';
export const REPLY_KIND_CHUNK = 'chunk';

/**
 * `apphost.<service>.transfer.<instanceId>.<life>.read-chunk.v1`: served only by the server holding the parked reply.
 * `life` is random per server, so one restarted under the same instance id never answers for its predecessor.
 */
export function transferSubject(service: string, instanceId: string, life: string): string {
  return `apphost.${service}.transfer.${instanceId}.${life}.read-chunk.v1`;
}

const TRANSFER_SUBJECT = /^apphost\.[A-Za-z0-9_.-]+\.transfer\.[A-Za-z0-9_-]{1,64}\.[0-9a-f]{12}\.read-chunk\.v1$/;

export const transferEnvelopeSchema = z
  .object({
    transferId: z.string().uuid(),
    totalBytes: z.number().int().positive(),
    chunkBytes: z.number().int().positive(),
    /** SHA-256 of the whole reply, lower-case hex. */
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    subject: z.string().regex(TRANSFER_SUBJECT),
  })
  .strict();
export type TransferEnvelope = z.infer<typeof transferEnvelopeSchema>;

export const readChunkRequestSchema = z.object({ transferId: z.string().uuid(), index: z.number().int().min(0) }).strict();
export type ReadChunkRequest = z.infer<typeof readChunkRequestSchema>;

export function chunkCount(totalBytes: number, chunkBytes: number): number {
  return Math.ceil(totalBytes / chunkBytes);
}

/** Length of chunk `index`: every chunk is full but the last. */
export function chunkLength(envelope: Pick<TransferEnvelope, 'totalBytes' | 'chunkBytes'>, index: number): number {
  return Math.min(envelope.chunkBytes, envelope.totalBytes - index * envelope.chunkBytes);
}
