import { randomUUID } from 'node:crypto';
import { AppHostError, instanceSubject, invalidArgument, type BusContract, type ErrorCode, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { decodeJson, encodeJson, errorReply, okReply, type Reply } from './codec';
import { CHUNK_HEADROOM_BYTES, DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_TRANSFER_LIMITS, type TransferLimits } from './limits';
import type { HandlerContext } from './handler-context';
import { HEADER_CORRELATION_ID, HEADER_DEADLINE, isValidCorrelationId } from './headers';
import { NO_BUS_METRICS, type BusMetrics } from './metrics';
import { RequestContexts } from './request-context';
import { endSpan, HEADER_TRACEPARENT, parseTraceparent, startSpan } from './tracing';
import { TransferServer } from './transfer/transfer-server';
import type { BusTransport, IncomingMessage, TransportReply, TransportSubscription } from './transports/transport';

export type BusHandlerFn<C extends BusContract> = (request: ParsedRequestOf<C>, context: HandlerContext) => Promise<ResponseOf<C>> | ResponseOf<C>;

export interface BusLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  /** One line per handled request (subject, outcome, duration), tagged with its correlation id by the logger. */
  debug?(obj: object, msg: string): void;
}

export interface HandlerRouting {
  /** `instance`: subscribe on this process's own subject (queue group `<queue>.<instanceId>`). */
  routing?: 'service' | 'instance';
  instanceSegment?: string;
  /** Overrides the server's queue group for this handler; it can never be empty. */
  queue?: string;
}

export interface BusServerOptions {
  transport: BusTransport;
  instanceId: string;
  /** Mandatory: without a queue group every replica would execute every request. */
  queueGroup: string;
  logger: BusLogger;
  maxPayloadBytes?: number;
  metrics?: BusMetrics;
  /**
   * Gives an error that is not an `AppHostError` its typed form before the `INTERNAL` fallback (a store's lost
   * connection is `UNAVAILABLE`, not a bug), so every handler gets the same mapping; `undefined` leaves it internal.
   */
  classifyError?: (error: unknown) => AppHostError | undefined;
  /** Bounds of chunked replies (defaults: `DEFAULT_TRANSFER_LIMITS`); the chunk is capped below the payload limit. */
  transfer?: Partial<TransferLimits>;
}

/** A wiring mistake that must stop the process at startup, never surface as a runtime error. */
export class BusConfigurationError extends Error {
  override name = 'BusConfigurationError';
}

const QUEUE_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;
const INSTANCE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

interface Registration {
  subject: string;
  queue: string;
  contract: BusContract;
  handler: BusHandlerFn<BusContract>;
}

/**
 * The serving side of the bus: validates every request against its contract before the handler runs,
 * maps every outcome to one reply (result or error envelope), and drains in-flight work on shutdown.
 */
export class BusServer {
  private readonly registrations = new Map<string, Registration>();
  private readonly subscriptions: TransportSubscription[] = [];
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly maxPayloadBytes: number;
  private readonly metrics: BusMetrics;
  private readonly transfers: TransferServer;
  private state: 'idle' | 'serving' | 'stopping' | 'stopped' = 'idle';

  constructor(private readonly options: BusServerOptions) {
    assertQueue(options.queueGroup, 'the server queue group');
    if (!INSTANCE_PATTERN.test(options.instanceId))
      throw new BusConfigurationError(`the instance id must match ${INSTANCE_PATTERN} (got ${JSON.stringify(options.instanceId)})`);
    this.maxPayloadBytes = Math.min(options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, options.transport.maxPayloadBytes);
    this.metrics = options.metrics ?? NO_BUS_METRICS;
    this.transfers = new TransferServer({
      transport: options.transport,
      service: options.queueGroup,
      instanceId: options.instanceId,
      queue: `${options.queueGroup}.${options.instanceId}.transfer`,
      limits: transferLimits(options.transfer, this.maxPayloadBytes),
      metrics: this.metrics,
    });
  }

  register<C extends BusContract>(contract: C, handler: BusHandlerFn<C>, routing: HandlerRouting = {}): void {
    if (this.state !== 'idle') throw new BusConfigurationError(`cannot register ${contract.subject} after the server started`);
    const perInstance = routing.routing === 'instance';
    const subject = perInstance ? instanceSubject(contract, this.options.instanceId, routing.instanceSegment) : contract.subject;
    const baseQueue = routing.queue ?? this.options.queueGroup;
    assertQueue(baseQueue, `the queue group of ${subject}`);
    if (this.registrations.has(subject)) throw new BusConfigurationError(`two handlers for ${subject}`);
    const queue = perInstance ? `${baseQueue}.${this.options.instanceId}` : baseQueue;
    this.registrations.set(subject, { subject, queue, contract, handler: handler as BusHandlerFn<BusContract> });
  }

  get subjects(): string[] {
    return [...this.registrations.keys()];
  }

  start(): void {
    if (this.state !== 'idle') throw new BusConfigurationError('the bus server was already started');
    for (const reg of this.registrations.values()) {
      this.subscriptions.push(this.options.transport.subscribe(reg.subject, reg.queue, (msg) => this.track(this.handle(reg, msg))));
    }
    this.transfers.start();
    this.state = 'serving';
  }

  /** Resolves once the transport's server has every subscription of `start()`: from then on a request finds this server. */
  async ready(): Promise<void> {
    await this.options.transport.flush?.();
  }

  /**
   * Stop taking requests, then give in-flight handlers up to `graceMs` to finish and reply; large replies parked by
   * then are served to their requesters within the same grace, and freed after it.
   */
  async stop(graceMs: number): Promise<void> {
    if (this.state === 'stopped' || this.state === 'stopping') return;
    this.state = 'stopping';
    const graceEnds = Date.now() + graceMs;
    await Promise.all(this.subscriptions.map((s) => s.drain()));
    if (this.inflight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), graceMs)));
      const outcome = await Promise.race([Promise.allSettled([...this.inflight]).then(() => 'done' as const), expired]);
      clearTimeout(timer);
      if (outcome === 'expired')
        this.options.logger.warn({ inflight: this.inflight.size, graceMs }, 'bus shutdown grace period expired with handlers in flight');
    }
    await this.transfers.stop(graceEnds);
    this.state = 'stopped';
  }

  get inflightCount(): number {
    return this.inflight.size;
  }

  /** Bytes of large replies parked for chunked transfer, not yet read whole nor expired. */
  get parkedTransferBytes(): number {
    return this.transfers.parkedBytes;
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inflight.add(work);
    void work.finally(() => this.inflight.delete(work));
    return work;
  }

  private handle(reg: Registration, msg: IncomingMessage): Promise<TransportReply> {
    const context = contextOf(msg, this.transfers);
    const span = startSpan({
      name: `bus handle ${reg.subject}`,
      kind: 'server',
      service: this.options.queueGroup,
      parent: parseTraceparent(msg.headers[HEADER_TRACEPARENT]),
      attributes: { 'messaging.destination.name': reg.subject },
    });
    return RequestContexts.run({ correlationId: context.correlationId, deadline: context.deadline, span }, async () => {
      const started = performance.now();
      const { reply, code } = this.encodeReply(reg, await this.execute(reg, msg, context), context);
      const seconds = (performance.now() - started) / 1000;
      this.metrics.observeHandled(reg.contract.subject, code, seconds);
      this.options.logger.debug?.({ subject: reg.subject, outcome: code, ms: Math.round(seconds * 1000) }, 'bus request handled');
      endSpan(span, code);
      return reply;
    });
  }

  /**
   * A reply over the payload limit is parked and answered with a transfer envelope its requester reads in chunks;
   * `code` is the outcome the requester will see (a refused transfer's, not the handler's).
   */
  private encodeReply(reg: Registration, envelope: Reply, context: HandlerContext): { reply: TransportReply; code: ErrorCode | 'OK' } {
    let code: ErrorCode | 'OK' = envelope.ok ? 'OK' : envelope.error.code;
    let bytes: Uint8Array;
    try {
      bytes = encodeJson(envelope);
    } catch (error) {
      // A result JSON cannot carry (a BigInt, a cycle): a bug in the handler, answered like any other.
      this.options.logger.error({ err: error, subject: reg.subject, correlationId: context.correlationId }, 'handler result is not JSON-serializable');
      code = 'INTERNAL';
      bytes = encodeJson(internalReply(context.correlationId));
    }
    if (bytes.byteLength <= this.maxPayloadBytes) return { reply: { data: bytes, headers: {} }, code };
    try {
      return { reply: this.transfers.offer(reg.contract.subject, bytes, context.deadline), code };
    } catch (error) {
      if (!(error instanceof AppHostError)) throw error;
      this.options.logger.warn({ subject: reg.subject, correlationId: context.correlationId, bytes: bytes.byteLength, code: error.code }, error.message);
      return { reply: { data: encodeJson(errorReply(error.toEnvelope())), headers: {} }, code: error.code };
    }
  }

  private async execute(reg: Registration, msg: IncomingMessage, context: HandlerContext) {
    if (this.state !== 'serving') return errorReply(new AppHostError('UNAVAILABLE', 'the service is shutting down; not executed').toEnvelope());
    if (context.deadline !== undefined && context.deadline <= Date.now()) {
      return errorReply(new AppHostError('DEADLINE_EXCEEDED', 'the request arrived after its deadline; not executed').toEnvelope());
    }
    let raw: unknown;
    try {
      raw = decodeJson(msg.data);
    } catch {
      return errorReply(new AppHostError('INVALID_ARGUMENT', 'the request payload is not valid JSON').toEnvelope());
    }
    const parsed = reg.contract.request.safeParse(raw);
    if (!parsed.success) return errorReply(invalidArgument(`the ${reg.contract.operation} request to ${reg.contract.service}`, parsed.error).toEnvelope());
    try {
      // The result is not parsed here: the requester validates every reply against the contract (`BusClient.request`),
      // which is the boundary; the handler's result is typed against the same schema at compile time (decision 0020).
      return okReply(await reg.handler(parsed.data, context));
    } catch (error) {
      if (error instanceof AppHostError) return errorReply(error.toEnvelope());
      const classified = this.options.classifyError?.(error);
      if (classified) {
        this.options.logger.warn({ err: error, subject: reg.subject, correlationId: context.correlationId, code: classified.code }, classified.message);
        return errorReply(classified.toEnvelope());
      }
      this.options.logger.error({ err: error, subject: reg.subject, correlationId: context.correlationId }, 'unexpected error in bus handler');
      return internalReply(context.correlationId);
    }
  }
}

/** A handler's bug as the requester sees it: INTERNAL with the correlation id, nothing of the cause (that is logged). */
function internalReply(correlationId: string): Reply {
  return errorReply(new AppHostError('INTERNAL', 'internal error', { details: { correlationId } }).toEnvelope());
}

function contextOf(msg: IncomingMessage, transfers: TransferServer): HandlerContext {
  const correlationId = msg.headers[HEADER_CORRELATION_ID];
  const header = Number(msg.headers[HEADER_DEADLINE]);
  const deadline = Number.isFinite(header) && header > 0 ? header : undefined;
  return {
    subject: msg.subject,
    correlationId: isValidCorrelationId(correlationId) ? correlationId : randomUUID(),
    deadline,
    hold: (label, bytes) => transfers.hold(label, bytes, deadline),
  };
}

function transferLimits(overrides: Partial<TransferLimits> | undefined, maxPayloadBytes: number): TransferLimits {
  const limits = { ...DEFAULT_TRANSFER_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value <= 0) throw new BusConfigurationError(`transfer ${name} must be a positive integer (got ${value})`);
  }
  // A chunk and its headers must fit in one message.
  return { ...limits, chunkBytes: Math.min(limits.chunkBytes, Math.max(1, maxPayloadBytes - CHUNK_HEADROOM_BYTES)) };
}

function assertQueue(queue: string | undefined, what: string): void {
  if (typeof queue !== 'string' || !QUEUE_PATTERN.test(queue)) {
    throw new BusConfigurationError(`${what} is required and must match ${QUEUE_PATTERN} (got ${JSON.stringify(queue)})`);
  }
}
