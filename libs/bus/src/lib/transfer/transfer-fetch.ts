import { createHash } from 'node:crypto';
import { AppHostError, byteReferenceSchema, type ByteReference } from '@apphost/contracts';
import { decodeJson, encodeJson, replySchema } from '../codec';
import { TransportError, type BusTransport } from '../transports/transport';
import { chunkCount, chunkLength, HEADER_REPLY_KIND, REPLY_KIND_CHUNK } from './transfer-protocol';

/**
 * Chunk requests in flight at once per transfer: a few overlap the round trips. Measured for 4.3 MB over local NATS
 * (best of 20): about 70 ms with 1, 40 ms with 4, no better with 8.
 */
export const TRANSFER_PARALLELISM = 4;

export interface TransferFetchOptions {
  transport: BusTransport;
  /** The service that produced the reply: what error messages name. */
  service: string;
  correlationId: string;
  /** Epoch ms: the original request's whole budget, the chunks included. */
  deadlineAt: number;
  /** The original request's headers (correlation id, deadline, trace), sent with every chunk request. */
  headers: Record<string, string>;
}

/**
 * Reads held bytes whole by their envelope: a parked reply's, or a byte reference a handler handed on. The operation has run by now, so a failure here never
 * claims it did not: a deadline that expires is OUTCOME_UNKNOWN, as for any reply that did not arrive in time; a
 * server gone (or the transfer gone from it) is DATA_LOSS, as are bytes that do not match the envelope's length and
 * digest. Neither is retryable blindly: retry only with the same operation key.
 */
export async function fetchHeld(envelope: ByteReference, options: TransferFetchOptions): Promise<Uint8Array> {
  const total = chunkCount(envelope.totalBytes, envelope.chunkBytes);
  const bytes = new Uint8Array(envelope.totalBytes);
  let next = 0;
  let failure: AppHostError | undefined;
  const worker = async () => {
    while (failure === undefined && next < total) {
      const index = next++;
      try {
        bytes.set(await readChunk(envelope, index, options), index * envelope.chunkBytes);
      } catch (error) {
        failure ??= error instanceof AppHostError ? error : lost(envelope, options, 'in-transit');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(TRANSFER_PARALLELISM, total) }, worker));
  if (failure) throw failure;
  if (createHash('sha256').update(bytes).digest('hex') !== envelope.sha256) throw corrupt(envelope, options, 'its digest does not match');
  return bytes;
}

/** The envelope a parked reply answers with, checked: INTERNAL when it is not one. */
export function parseEnvelope(bytes: Uint8Array, options: Pick<TransferFetchOptions, 'service' | 'correlationId'>): ByteReference {
  let raw: unknown;
  try {
    raw = decodeJson(bytes);
  } catch {
    raw = undefined;
  }
  const parsed = byteReferenceSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AppHostError('INTERNAL', `malformed reply from ${options.service}`, {
      details: { service: options.service, correlationId: options.correlationId },
    });
  }
  return parsed.data;
}

async function readChunk(envelope: ByteReference, index: number, options: TransferFetchOptions): Promise<Uint8Array> {
  const timeoutMs = options.deadlineAt - Date.now();
  if (timeoutMs <= 0) throw late(envelope, options);
  let reply;
  try {
    reply = await options.transport.request(envelope.subject, encodeJson({ transferId: envelope.transferId, index }), { timeoutMs, headers: options.headers });
  } catch (error) {
    if (error instanceof TransportError && error.failure === 'timeout') throw late(envelope, options);
    throw lost(envelope, options, error instanceof TransportError ? error.failure : 'in-transit');
  }
  if (reply.headers[HEADER_REPLY_KIND] !== REPLY_KIND_CHUNK) throw lost(envelope, options, 'refused', refusalCode(reply.data));
  if (reply.data.byteLength !== chunkLength(envelope, index)) throw corrupt(envelope, options, `chunk ${index} has ${reply.data.byteLength} bytes`);
  return reply.data;
}

/** The code of the error envelope a chunk server answered with (the transfer expired, say), for the details. */
function refusalCode(data: Uint8Array): string {
  try {
    const reply = replySchema.safeParse(decodeJson(data));
    return reply.success && !reply.data.ok ? reply.data.error.code : 'malformed';
  } catch {
    return 'malformed';
  }
}

function late(envelope: ByteReference, options: TransferFetchOptions): AppHostError {
  return new AppHostError(
    'OUTCOME_UNKNOWN',
    `${options.service} ran the request, but its reply of ${envelope.totalBytes} bytes did not arrive in time (retry only with the same operation key)`,
    { details: { service: options.service, transport: 'timeout', correlationId: options.correlationId, transferBytes: envelope.totalBytes } },
  );
}

function lost(envelope: ByteReference, options: TransferFetchOptions, cause: string, refusedWith?: string): AppHostError {
  return new AppHostError(
    'DATA_LOSS',
    `${options.service} ran the request, but its reply of ${envelope.totalBytes} bytes was lost in transfer (retry only with the same operation key)`,
    {
      details: {
        service: options.service,
        transport: 'transfer-lost',
        cause,
        ...(refusedWith ? { refusedWith } : {}),
        correlationId: options.correlationId,
        transferBytes: envelope.totalBytes,
      },
    },
  );
}

function corrupt(envelope: ByteReference, options: TransferFetchOptions, what: string): AppHostError {
  return new AppHostError('DATA_LOSS', `the reply of ${envelope.totalBytes} bytes from ${options.service} arrived corrupt: ${what}`, {
    details: { service: options.service, transport: 'transfer-corrupt', correlationId: options.correlationId, transferBytes: envelope.totalBytes },
  });
}
