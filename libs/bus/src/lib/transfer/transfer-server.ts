import { randomBytes } from 'node:crypto';
import { AppHostError, type ByteReference, type ErrorCode } from '@apphost/contracts';
import { decodeJson, encodeJson, errorReply } from '../codec';
import type { TransferLimits } from '../limits';
import type { BusMetrics } from '../metrics';
import type { BusTransport, IncomingMessage, TransportReply, TransportSubscription } from '../transports/transport';
import { ParkedReplies, type ParkedEnd } from './parked-replies';
import { HEADER_REPLY_KIND, readChunkRequestSchema, REPLY_KIND_CHUNK, REPLY_KIND_TRANSFER, transferSubject } from './transfer-protocol';

export interface TransferServerOptions {
  transport: BusTransport;
  service: string;
  instanceId: string;
  queue: string;
  limits: TransferLimits;
  metrics: BusMetrics;
}

const END_OUTCOME: Record<ParkedEnd, ErrorCode | 'OK'> = { read: 'OK', expired: 'DEADLINE_EXCEEDED', stopped: 'UNAVAILABLE' };

/**
 * The serving half of chunked replies: parks a reply too large for one message and serves its chunks on this
 * server's own subject. The subject carries a random id of this server's life besides the instance id, so a process
 * restarted under the same instance id (or a second server of that service and instance) never answers for
 * transfers it does not hold.
 */
export class TransferServer {
  readonly subject: string;
  private readonly parked: ParkedReplies;
  private subscription: TransportSubscription | undefined;

  constructor(private readonly options: TransferServerOptions) {
    this.subject = transferSubject(options.service, options.instanceId, randomBytes(6).toString('hex'));
    this.parked = new ParkedReplies(options.limits, (label, end, bytes) => options.metrics.observeTransfer?.(label, 'served', END_OUTCOME[end], bytes));
  }

  get parkedBytes(): number {
    return this.parked.parkedBytes;
  }

  get parkedCount(): number {
    return this.parked.parkedCount;
  }

  start(): void {
    this.subscription = this.options.transport.subscribe(this.subject, this.options.queue, (msg) => Promise.resolve(this.serveChunk(msg)));
  }

  /**
   * The reply to send instead of `bytes` (an encoded reply over the payload limit): a transfer envelope. Throws the
   * typed refusal when it cannot be held: PAYLOAD_TOO_LARGE (over the whole cap), RESOURCE_EXHAUSTED (no room now).
   * `deadline`: the request's, past which nobody will read it.
   */
  offer(label: string, bytes: Uint8Array, deadline: number | undefined): TransportReply {
    return { data: encodeJson(this.hold(label, bytes, deadline)), headers: { [HEADER_REPLY_KIND]: REPLY_KIND_TRANSFER } };
  }

  /**
   * Parks `bytes` and returns the envelope to fetch them by. Throws the typed refusal when they cannot be held:
   * PAYLOAD_TOO_LARGE (over the whole cap), RESOURCE_EXHAUSTED (no room now). `deadline`: past it nobody will read them.
   */
  hold(label: string, bytes: Uint8Array, deadline: number | undefined): ByteReference {
    const result = this.parked.park(label, bytes, deadline);
    if (result.parked) {
      return { transferId: result.transferId, totalBytes: result.totalBytes, chunkBytes: result.chunkBytes, sha256: result.sha256, subject: this.subject };
    }
    const { maxParkedBytes } = this.options.limits;
    if (result.why === 'larger-than-capacity') {
      this.options.metrics.observeTransfer?.(label, 'served', 'PAYLOAD_TOO_LARGE', bytes.byteLength);
      throw new AppHostError('PAYLOAD_TOO_LARGE', `reply of ${bytes.byteLength} bytes exceeds the bus transfer limit of ${maxParkedBytes}`, {
        details: { bytes: bytes.byteLength, limit: maxParkedBytes },
      });
    }
    this.options.metrics.observeTransfer?.(label, 'served', 'RESOURCE_EXHAUSTED', bytes.byteLength);
    throw new AppHostError(
      'RESOURCE_EXHAUSTED',
      `the reply of ${bytes.byteLength} bytes cannot be held for transfer now (the service holds too many large replies)`,
      {
        retryable: true,
        details: { bytes: bytes.byteLength, parkedBytes: this.parked.parkedBytes, limit: maxParkedBytes, retryAfterMs: result.retryAfterMs },
      },
    );
  }

  /** Keeps serving chunks until every parked reply was read or `deadline` (epoch ms) passed, then stops and frees the rest. */
  async stop(deadline: number): Promise<void> {
    if (this.parked.parkedCount > 0) {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))));
      await Promise.race([this.parked.whenEmpty(), expired]);
      clearTimeout(timer);
    }
    await this.subscription?.drain();
    this.parked.clear();
  }

  private serveChunk(msg: IncomingMessage): TransportReply {
    let raw: unknown;
    try {
      raw = decodeJson(msg.data);
    } catch {
      return errorOf(new AppHostError('INVALID_ARGUMENT', 'the chunk request is not valid JSON'));
    }
    const request = readChunkRequestSchema.safeParse(raw);
    if (!request.success) return errorOf(new AppHostError('INVALID_ARGUMENT', 'malformed chunk request'));
    const read = this.parked.read(request.data.transferId, request.data.index);
    if ('chunk' in read) return { data: read.chunk, headers: { [HEADER_REPLY_KIND]: REPLY_KIND_CHUNK } };
    if (read.missing === 'no-such-chunk') return errorOf(new AppHostError('INVALID_ARGUMENT', `the transfer has no chunk ${request.data.index}`));
    return errorOf(new AppHostError('NOT_FOUND', 'no such transfer: it was read already, expired, or its server restarted'));
  }
}

function errorOf(error: AppHostError): TransportReply {
  return { data: encodeJson(errorReply(error.toEnvelope())), headers: {} };
}
