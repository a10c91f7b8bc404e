import { z } from 'zod';
import type { ByteReference } from '@apphost/contracts';

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

export const readChunkRequestSchema = z.object({ transferId: z.string().uuid(), index: z.number().int().min(0) }).strict();
export type ReadChunkRequest = z.infer<typeof readChunkRequestSchema>;

export function chunkCount(totalBytes: number, chunkBytes: number): number {
  return Math.ceil(totalBytes / chunkBytes);
}

/** Length of chunk `index`: every chunk is full but the last. */
export function chunkLength(envelope: Pick<ByteReference, 'totalBytes' | 'chunkBytes'>, index: number): number {
  return Math.min(envelope.chunkBytes, envelope.totalBytes - index * envelope.chunkBytes);
}
