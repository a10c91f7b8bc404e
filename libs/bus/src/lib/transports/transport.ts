/** What a transport must provide; the client and server add validation, errors and metrics on top. */
export interface BusTransport {
  readonly kind: 'nats' | 'in-process';
  /** The largest message the transport can carry, in bytes. */
  readonly maxPayloadBytes: number;
  /** Its bus namespace (`BUS_SUBJECT_PREFIX`): prepended on the wire to every subject and queue group. */
  readonly subjectPrefix: string;
  request(subject: string, data: Uint8Array, options: TransportRequestOptions): Promise<TransportReply>;
  subscribe(subject: string, queue: string, handler: TransportHandler): TransportSubscription;
  isConnected(): boolean;
  /** Resolves once the server has seen every subscription made so far (NATS: a PING round trip); absent in process. */
  flush?(): Promise<void>;
  close(): Promise<void>;
}

export interface TransportRequestOptions {
  timeoutMs: number;
  headers: Record<string, string>;
}

export interface IncomingMessage {
  subject: string;
  data: Uint8Array;
  headers: Record<string, string>;
}

/**
 * A reply on the wire. Its headers are set by the bus server only (a handler returns data, never headers), so a
 * header can mark a reply's kind (a chunked transfer) without any chance of colliding with a handler's result.
 */
export interface TransportReply {
  data: Uint8Array;
  headers: Record<string, string>;
}

/** A handler produces the reply; the transport sends it to the requester. */
export type TransportHandler = (message: IncomingMessage) => Promise<TransportReply>;

export interface TransportSubscription {
  /** Stop receiving; messages already delivered still reach the handler. */
  drain(): Promise<void>;
}

/** `disconnected` and `closed`: refused before publishing (nothing sent). `timeout`: published, no reply in time. */
export type TransportFailure = 'no-responders' | 'timeout' | 'closed' | 'disconnected' | 'payload-too-large';

/** A failure of the transport itself, before or instead of a reply. */
export class TransportError extends Error {
  constructor(
    readonly failure: TransportFailure,
    message: string,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}
