import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type SpanContext } from '@opentelemetry/api';
import type { ErrorCode } from '@apphost/contracts';

/**
 * Spans for every bus hop and HTTP request, through the OpenTelemetry API only: with no SDK registered (the
 * runtime registers one when an exporter is configured) they cost a no-op, yet `traceparent` still propagates.
 */
const tracer = () => trace.getTracer('apphost');

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
  const context = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
  return tracer().startSpan(
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
