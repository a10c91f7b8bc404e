import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface Tracing {
  shutdown(): Promise<void>;
}

const NO_TRACING: Tracing = { shutdown: async () => undefined };

/**
 * Registers the process's tracer provider: OTLP over HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (the exporter
 * reads the standard OTEL_* variables itself), otherwise nothing — spans stay no-ops and only `traceparent` flows.
 */
export function startTracing(serviceName: string, env: { OTEL_EXPORTER_OTLP_ENDPOINT?: string }): Tracing {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT) return NO_TRACING;
  return registerTracerProvider(serviceName, new BatchSpanProcessor(new OTLPTraceExporter()));
}

/** One provider per process; tests pass a processor over an in-memory exporter. */
export function registerTracerProvider(serviceName: string, processor: SpanProcessor): Tracing {
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': serviceName }), spanProcessors: [processor] });
  trace.setGlobalTracerProvider(provider);
  return {
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
    },
  };
}
