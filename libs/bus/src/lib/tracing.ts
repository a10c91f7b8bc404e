import {
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { ErrorCode } from '@apphost/contracts';

/**
 * Spans for every bus hop and HTTP request, through the OpenTelemetry API only: with no SDK registered (the
 * runtime registers one when an exporter is configured) they cost a no-op, yet `traceparent` still propagates.
 */
const TRACER_NAME = 'apphost';

/**
 * The registered SDK's tracer, or undefined when none is registered (looked up per span: tests register and
 * disable providers at will). Then a span would be the API's no-op anyway, built through a fresh `ProxyTracer`, a
 * context and an attribute object per span (~3 µs, two per bus hop); `startSpan` builds what the no-op tracer would
 * return directly instead.
 */
function sdkTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider ? provider.getDelegateTracer(TRACER_NAME) : provider.getTracer(TRACER_NAME);
}

/** The no-op tracer's span without a valid parent: non-recording, invalid context, stateless (so shared). */
const NO_PARENT_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export const HEADER_TRACEPARENT = 'traceparent';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The remote parent a W3C `traceparent` names, when it is well-formed and not all zeros. */
export function parseTraceparent(value: unknown): SpanContext | undefined {
  if (typeof value !== 'string') return undefined;
  const m = TRACEPARENT.exec(value);
  if (!m || /^0+$/.test(m[1]) || /^0+$/.test(m[2])) return undefined;
  return { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16), isRemote: true };
}

export function formatTraceparent(span: Span): string | undefined {
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!trace.isSpanContextValid(span.spanContext())) return undefined;
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

export interface SpanStart {
  name: string;
  kind: 'server' | 'client';
  /** The AppHost service the span belongs to (several share one process in the all-in-one plane). */
  service: string | undefined;
  parent: Span | SpanContext | undefined;
  attributes?: Record<string, string | number>;
}

export function startSpan(start: SpanStart): Span {
  const parent = start.parent && 'spanContext' in start.parent ? start.parent.spanContext() : start.parent;
  const tracer = sdkTracer();
  // What the API's no-op tracer returns: the parent's context, unrecorded (so `traceparent` still carries it).
  if (!tracer) return parent && trace.isSpanContextValid(parent) ? trace.wrapSpanContext(parent) : NO_PARENT_SPAN;
  const context = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
  return tracer.startSpan(
    start.name,
    {
      kind: start.kind === 'server' ? SpanKind.SERVER : SpanKind.CLIENT,
      attributes: { ...(start.service ? { 'apphost.service': start.service } : {}), ...start.attributes },
    },
    context,
  );
}

/** Ends a span with the outcome code the bus or the HTTP edge reports. */
export function endSpan(span: Span, outcome: ErrorCode | 'OK' | `HTTP ${number}`): void {
  span.setAttribute('apphost.outcome', outcome);
  if (outcome !== 'OK' && !/^HTTP [1234]/.test(outcome)) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
  span.end();
}
