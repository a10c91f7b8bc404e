import type { Registry } from 'prom-client';

/**
 * The bus's two hot metric families (requests by subject and outcome code, latency by subject), kept in series
 * objects cached per label set instead of prom-client's `inc(labels)` / `observe(labels)`, which validate the label
 * names and hash the label object on every call (~1.5 µs per bus hop, for a handful of subjects that never change).
 * Both register with the service's prom-client `Registry` and export through it unchanged: same names, help,
 * types, labels (in the order prom-client writes them) and default labels.
 */
interface Exported {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
}

interface MetricData {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: Exported[];
  aggregator: 'sum';
}

abstract class CachedSeries {
  readonly aggregator = 'sum' as const;
  abstract readonly type: 'counter' | 'histogram';

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    // The registry only calls `get()` (exposition) and `reset()`; prom-client's type wants its own classes.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  abstract reset(): void;
  protected abstract values(): Exported[];

  /** The text exposition's form (a histogram's `subject` as `sharedLabels`, which prom-client writes after `le`). */
  getForPromString(): Promise<MetricData> {
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: this.aggregator });
  }

  /** The JSON form (`getMetricsAsJSON`): every label in `labels`. */
  async get(): Promise<MetricData> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return data;
  }
}

/** `<name>{subject, code}`: a counter per subject and outcome code. */
export class SubjectCodeCounter extends CachedSeries {
  readonly type = 'counter' as const;
  private series = new Map<string, Map<string, { labels: { subject: string; code: string }; value: number }>>();

  inc(subject: string, code: string, by = 1): void {
    let codes = this.series.get(subject);
    if (!codes) this.series.set(subject, (codes = new Map()));
    const one = codes.get(code);
    if (one) one.value += by;
    else codes.set(code, { labels: { subject, code }, value: by });
  }

  reset(): void {
    this.series = new Map();
  }

  protected values(): Exported[] {
    const out: Exported[] = [];
    for (const codes of this.series.values()) for (const one of codes.values()) out.push({ labels: { ...one.labels }, value: one.value });
    return out;
  }
}

/** `<name>_bucket{le, subject}`, `_sum`, `_count`: a latency histogram per subject (cumulative buckets, `+Inf`). */
export class SubjectHistogram extends CachedSeries {
  readonly type = 'histogram' as const;
  private series = new Map<string, { shared: { subject: string }; buckets: number[]; sum: number; count: number }>();

  constructor(
    name: string,
    help: string,
    registry: Registry,
    private readonly bounds: readonly number[],
  ) {
    super(name, help, registry);
  }

  observe(subject: string, seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    let one = this.series.get(subject);
    if (!one) this.series.set(subject, (one = { shared: { subject }, buckets: new Array<number>(this.bounds.length).fill(0), sum: 0, count: 0 }));
    one.sum += seconds;
    one.count += 1;
    // Non-cumulative here (one increment per observation); exported cumulatively like prom-client's.
    for (let i = 0; i < this.bounds.length; i++) {
      if (seconds <= this.bounds[i]) {
        one.buckets[i] += 1;
        break;
      }
    }
  }

  reset(): void {
    this.series = new Map();
  }

  protected values(): Exported[] {
    const out: Exported[] = [];
    const bucket = `${this.name}_bucket`;
    for (const one of this.series.values()) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += one.buckets[i];
        out.push({ labels: { le: this.bounds[i] }, sharedLabels: { ...one.shared }, value: acc, metricName: bucket });
      }
      out.push({ labels: { le: '+Inf' }, sharedLabels: { ...one.shared }, value: one.count, metricName: bucket });
      out.push({ labels: {}, sharedLabels: { ...one.shared }, value: one.sum, metricName: `${this.name}_sum` });
      out.push({ labels: {}, sharedLabels: { ...one.shared }, value: one.count, metricName: `${this.name}_count` });
    }
    return out;
  }
}
