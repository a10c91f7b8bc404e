import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BusMetrics } from '@apphost/bus';
import { SubjectCodeCounter, SubjectHistogram } from './bus-series';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One Prometheus registry per service: bus requests served and sent, by subject and outcome code; chunked replies. */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly bus: BusMetrics;
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route'>;

  constructor(service: string, options: { processMetrics: boolean }) {
    this.registry.setDefaultLabels({ service });
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    // The per-request families: label sets cached per subject (bus-series.ts), not looked up per call.
    const handled = new SubjectCodeCounter('apphost_bus_handled_total', 'Bus requests handled, by subject and outcome code', this.registry);
    const handledSeconds = new SubjectHistogram('apphost_bus_handled_seconds', 'Bus handler latency', this.registry, LATENCY_BUCKETS);
    const requested = new SubjectCodeCounter('apphost_bus_requested_total', 'Bus requests sent, by subject and outcome code', this.registry);
    const requestedSeconds = new SubjectHistogram('apphost_bus_requested_seconds', 'Bus request round-trip latency', this.registry, LATENCY_BUCKETS);
    const transfers = new Counter({
      name: 'apphost_bus_transfers_total',
      help: 'Bus replies over the payload limit moved in chunks, by subject, side (served, fetched) and outcome code',
      labelNames: ['subject', 'side', 'code'],
      registers: [this.registry],
    });
    const transferBytes = new Counter({
      name: 'apphost_bus_transfer_bytes_total',
      help: 'Bytes of bus replies moved in chunks, by subject and side',
      labelNames: ['subject', 'side'],
      registers: [this.registry],
    });
    this.httpRequests = new Counter({
      name: 'apphost_http_requests_total',
      help: 'HTTP requests, by route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'apphost_http_request_seconds',
      help: 'HTTP request latency',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.bus = {
      observeHandled: (subject, code, seconds) => {
        handled.inc(subject, code);
        handledSeconds.observe(subject, seconds);
      },
      observeRequested: (subject, code, seconds) => {
        requested.inc(subject, code);
        requestedSeconds.observe(subject, seconds);
      },
      observeTransfer: (subject, side, code, bytes) => {
        transfers.inc({ subject, side, code });
        transferBytes.inc({ subject, side }, bytes);
      },
    };
  }

  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }
}
