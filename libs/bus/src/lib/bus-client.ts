import { randomUUID } from 'node:crypto';
import { AppHostError, instanceSubject, type BusContract, type ByteReference, type RequestOf, type ResponseOf } from '@apphost/contracts';
import { decodeJson, encodeJson, replySchema } from './codec';
import { HEADER_CORRELATION_ID, HEADER_DEADLINE } from './headers';
import { RequestContexts } from './request-context';
import { endSpan, formatTraceparent, HEADER_TRACEPARENT, startSpan } from './tracing';
import { DEFAULT_MAX_PAYLOAD_BYTES } from './limits';
import { NO_BUS_METRICS, type BusMetrics } from './metrics';
import { fetchHeld, parseEnvelope } from './transfer/transfer-fetch';
import { HEADER_REPLY_KIND, REPLY_KIND_TRANSFER } from './transfer/transfer-protocol';
import { TransportError, type BusTransport, type TransportFailure, type TransportReply } from './transports/transport';

export interface BusClientOptions {
  transport: BusTransport;
  defaultTimeoutMs: number;
  maxPayloadBytes?: number;
  metrics?: BusMetrics;
  /** The service that sends (span attribution; several services share a process in the all-in-one plane). */
  service?: string;
}

export interface BusRequestOptions {
  /**
   * Overrides the default timeout; never longer than the current request's remaining deadline. `until-deadline`:
   * as long as that deadline allows (the HTTP edge forwarding a long operation); the default where there is none.
   */
  timeoutMs?: number | 'until-deadline';
  /** Route to one process: `apphost.<service>.<segment>.<instanceId>.<operation>.v<N>`. */
  instance?: { id: string; segment?: string };
  /** Only where no request is being served (a background job, a test): otherwise the current one's id is used. */
  correlationId?: string;
}

/**
 * The typed request side of the bus. The request being served (`RequestContexts`) carries over by itself: its
 * correlation id, its deadline (which bounds every timeout) and its span. Every request has a timeout; failures are always an `AppHostError`:
 * UNAVAILABLE (no responder, or the connection down: not executed), OUTCOME_UNKNOWN (timed out, may have run), PAYLOAD_TOO_LARGE
 * (nothing published), DEADLINE_EXCEEDED (parent deadline already passed, nothing published), or the
 * handler's own error envelope unchanged. A reply over the payload limit arrives in chunks (`transfer/`), within the
 * same timeout; a transfer that fails after the operation ran is OUTCOME_UNKNOWN (too late) or DATA_LOSS (lost, corrupt).
 */
export class BusClient {
  private readonly maxPayloadBytes: number;
  private readonly metrics: BusMetrics;

  constructor(private readonly options: BusClientOptions) {
    if (!(options.defaultTimeoutMs > 0)) throw new Error('BusClient: defaultTimeoutMs must be positive');
    this.maxPayloadBytes = Math.min(options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, options.transport.maxPayloadBytes);
    this.metrics = options.metrics ?? NO_BUS_METRICS;
  }

  async request<C extends BusContract>(contract: C, payload: RequestOf<C>, opts: BusRequestOptions = {}): Promise<ResponseOf<C>> {
    const subject = opts.instance ? instanceSubject(contract, opts.instance.id, opts.instance.segment) : contract.subject;
    const started = performance.now();
    try {
      const data = await this.exchange(subject, payload, opts, contract.subject);
      const parsed = contract.response.safeParse(data);
      if (!parsed.success) throw new AppHostError('INTERNAL', `the reply of ${contract.service} does not match its contract`);
      this.metrics.observeRequested(contract.subject, 'OK', (performance.now() - started) / 1000);
      return parsed.data as ResponseOf<C>;
    } catch (error) {
      const code = error instanceof AppHostError ? error.code : 'INTERNAL';
      this.metrics.observeRequested(contract.subject, code, (performance.now() - started) / 1000);
      throw error;
    }
  }

  /** Sends any payload to a subject and returns the reply data; used by `request` and by transport tests. */
  send(subject: string, payload: unknown, opts: BusRequestOptions = {}): Promise<unknown> {
    return this.exchange(subject, payload, opts, subject);
  }

  /**
   * The bytes a byte reference names (`HandlerContext.hold`), read whole from the process holding them, within the
   * timeout and the served request's deadline: length and SHA-256 checked. DATA_LOSS when they are gone (read already,
   * expired, the holder stopped) or corrupt; OUTCOME_UNKNOWN when the time runs out.
   */
  async fetchReference(reference: ByteReference, opts: Pick<BusRequestOptions, 'timeoutMs'> = {}): Promise<Uint8Array> {
    const current = RequestContexts.current();
    const deadlineAt = Math.min(Date.now() + this.effectiveTimeout(opts, current?.deadline), current?.deadline ?? Infinity);
    const correlationId = current?.correlationId ?? randomUUID();
    const span = startSpan({ name: 'bus fetch-reference', kind: 'client', service: this.options.service, parent: current?.span, attributes: {} });
    const headers: Record<string, string> = { [HEADER_CORRELATION_ID]: correlationId, [HEADER_DEADLINE]: String(deadlineAt) };
    const traceparent = formatTraceparent(span);
    if (traceparent) headers[HEADER_TRACEPARENT] = traceparent;
    try {
      const bytes = await this.fetchWhole(reference, 'reference', { subject: reference.subject, correlationId, deadlineAt, headers });
      endSpan(span, 'OK');
      return bytes;
    } catch (error) {
      endSpan(span, error instanceof AppHostError ? error.code : 'INTERNAL');
      throw error;
    }
  }

  /** `label`: the operation's subject for metrics (never an instance subject, whose ids would have no bound). */
  private async exchange(subject: string, payload: unknown, opts: BusRequestOptions, label: string): Promise<unknown> {
    const current = RequestContexts.current();
    const timeoutMs = this.effectiveTimeout(opts, current?.deadline);
    // Never later than the served request's deadline: the clock moved on since `timeoutMs` was computed from it.
    const deadlineAt = Math.min(Date.now() + timeoutMs, current?.deadline ?? Infinity);
    const correlationId = opts.correlationId ?? current?.correlationId ?? randomUUID();
    const bytes = encodePayload(payload);
    if (bytes.byteLength > this.maxPayloadBytes) {
      throw new AppHostError('PAYLOAD_TOO_LARGE', `request of ${bytes.byteLength} bytes exceeds the bus limit of ${this.maxPayloadBytes}`, {
        details: { bytes: bytes.byteLength, limit: this.maxPayloadBytes },
      });
    }
    const span = startSpan({
      name: `bus ${subject}`,
      kind: 'client',
      service: this.options.service,
      parent: current?.span,
      attributes: { 'messaging.destination.name': subject },
    });
    const headers: Record<string, string> = { [HEADER_CORRELATION_ID]: correlationId, [HEADER_DEADLINE]: String(deadlineAt) };
    const traceparent = formatTraceparent(span);
    if (traceparent) headers[HEADER_TRACEPARENT] = traceparent;
    try {
      let reply: TransportReply;
      try {
        reply = await this.options.transport.request(subject, bytes, { timeoutMs, headers });
      } catch (error) {
        throw transportFailure(error, subject, timeoutMs, correlationId);
      }
      const replyBytes =
        reply.headers[HEADER_REPLY_KIND] === REPLY_KIND_TRANSFER
          ? await this.fetchWhole(reply.data, label, { subject, correlationId, deadlineAt, headers })
          : reply.data;
      const data = unwrapReply(replyBytes, subject);
      endSpan(span, 'OK');
      return data;
    } catch (error) {
      endSpan(span, error instanceof AppHostError ? error.code : 'INTERNAL');
      throw error;
    }
  }

  /** `envelope`: a parked reply's, as it arrived (checked here), or a byte reference a contract validated. */
  private async fetchWhole(
    envelope: Uint8Array | ByteReference,
    label: string,
    request: { subject: string; correlationId: string; deadlineAt: number; headers: Record<string, string> },
  ): Promise<Uint8Array> {
    try {
      const service = serviceOf(request.subject);
      const reference = envelope instanceof Uint8Array ? parseEnvelope(envelope, { service, correlationId: request.correlationId }) : envelope;
      const bytes = await fetchHeld(reference, {
        transport: this.options.transport,
        service,
        correlationId: request.correlationId,
        deadlineAt: request.deadlineAt,
        headers: request.headers,
      });
      this.metrics.observeTransfer?.(label, 'fetched', 'OK', bytes.byteLength);
      return bytes;
    } catch (error) {
      const failure = error instanceof AppHostError ? error : new AppHostError('INTERNAL', `malformed reply from ${serviceOf(request.subject)}`);
      this.metrics.observeTransfer?.(label, 'fetched', failure.code, Number(failure.details?.['transferBytes'] ?? 0));
      throw failure;
    }
  }

  private effectiveTimeout(opts: BusRequestOptions, deadline: number | undefined): number {
    const timeoutMs =
      opts.timeoutMs === 'until-deadline'
        ? deadline === undefined
          ? this.options.defaultTimeoutMs
          : Infinity
        : (opts.timeoutMs ?? this.options.defaultTimeoutMs);
    if (!(timeoutMs > 0)) throw new AppHostError('INVALID_ARGUMENT', 'timeoutMs must be a positive number');
    if (deadline === undefined) {
      if (!Number.isFinite(timeoutMs)) throw new AppHostError('INVALID_ARGUMENT', 'timeoutMs must be a finite number');
      return timeoutMs;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new AppHostError('DEADLINE_EXCEEDED', 'the deadline of the request being served has passed; request not sent');
    return Math.min(timeoutMs, remaining);
  }
}

function encodePayload(payload: unknown): Uint8Array {
  if (payload === null || typeof payload !== 'object') throw new AppHostError('INVALID_ARGUMENT', 'a bus request payload must be a JSON object');
  try {
    return encodeJson(payload);
  } catch {
    throw new AppHostError('INVALID_ARGUMENT', 'the request payload is not JSON-serializable');
  }
}

function unwrapReply(bytes: Uint8Array, subject: string): unknown {
  let decoded: unknown;
  try {
    decoded = decodeJson(bytes);
  } catch {
    throw new AppHostError('INTERNAL', `malformed reply from ${serviceOf(subject)}`);
  }
  // The success path is checked by hand (the contract's response schema validates `data` next); only the
  // error branch needs the full envelope schema.
  if (typeof decoded === 'object' && decoded !== null && (decoded as { ok?: unknown }).ok === true && 'data' in decoded) {
    return (decoded as { data: unknown }).data;
  }
  const reply = replySchema.safeParse(decoded);
  if (!reply.success || reply.data.ok) throw new AppHostError('INTERNAL', `malformed reply from ${serviceOf(subject)}`);
  throw AppHostError.fromEnvelope(reply.data.error);
}

/**
 * The service a subject belongs to (`apphost.<service>.…`, also for instance subjects): what an error may name.
 * Subjects are internal wiring and never appear in an error a caller sees.
 */
function serviceOf(subject: string): string {
  const [root, service] = subject.split('.');
  return root === 'apphost' && service ? service : 'the service';
}

function transportFailure(error: unknown, subject: string, timeoutMs: number, correlationId: string): AppHostError {
  const service = serviceOf(subject);
  const details = (transport: TransportFailure | 'in-transit', extra: Record<string, unknown> = {}) => ({ service, transport, correlationId, ...extra });
  if (!(error instanceof TransportError)) {
    return new AppHostError('OUTCOME_UNKNOWN', `a request to ${service} failed in transit; it may have run`, { details: details('in-transit') });
  }
  switch (error.failure) {
    case 'no-responders':
      return new AppHostError('UNAVAILABLE', `${service} is unavailable; the request was not executed`, { details: details('no-responders') });
    case 'timeout':
      return new AppHostError('OUTCOME_UNKNOWN', `no reply from ${service} within ${timeoutMs} ms; it may have run (retry only with the same operation key)`, {
        details: details('timeout', { timeoutMs }),
      });
    case 'payload-too-large':
      return new AppHostError('PAYLOAD_TOO_LARGE', `a request to ${service} exceeds the transport limit`, { details: details('payload-too-large') });
    case 'disconnected':
      return new AppHostError('UNAVAILABLE', `the bus is disconnected; the request to ${service} was not sent`, { details: details('disconnected') });
    case 'closed':
      return new AppHostError('UNAVAILABLE', `the bus connection is closed; the request to ${service} was not sent`, { details: details('closed') });
  }
}

/** True when nothing served the subject (NATS "no responders"): the request was not executed by anyone. */
export function isNoResponders(error: unknown): boolean {
  return error instanceof AppHostError && error.code === 'UNAVAILABLE' && error.details?.['transport'] === 'no-responders';
}
