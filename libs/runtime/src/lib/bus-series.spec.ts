import { Counter, Histogram, Registry } from 'prom-client';
import { SubjectCodeCounter, SubjectHistogram } from './bus-series';

const BOUNDS = [0.001, 0.01, 0.1, 1];

/** prom-client's own classes, fed the same observations: the reference exposition. */
function reference(observations: [string, string, number][]): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'svc' });
  const counter = new Counter({ name: 'x_total', help: 'x', labelNames: ['subject', 'code'], registers: [registry] });
  const histogram = new Histogram({ name: 'x_seconds', help: 'y', labelNames: ['subject'], buckets: BOUNDS, registers: [registry] });
  for (const [subject, code, seconds] of observations) {
    counter.inc({ subject, code });
    histogram.observe({ subject }, seconds);
  }
  return registry;
}

function cached(observations: [string, string, number][]): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'svc' });
  const counter = new SubjectCodeCounter('x_total', 'x', registry);
  const histogram = new SubjectHistogram('x_seconds', 'y', registry, BOUNDS);
  for (const [subject, code, seconds] of observations) {
    counter.inc(subject, code);
    histogram.observe(subject, seconds);
  }
  return registry;
}

describe('cached bus series', () => {
  const observations: [string, string, number][] = [
    ['apphost.a.get.v1', 'OK', 0.0004],
    ['apphost.a.get.v1', 'OK', 0.02],
    ['apphost.a.get.v1', 'NOT_FOUND', 0.001],
    ['apphost.b.put.v1', 'OK', 5], // above every bound: only +Inf, sum and count
    ['apphost.b.put.v1', 'UNAVAILABLE', 0.1],
  ];

  it('exports exactly what prom-client would for the same observations (text and JSON)', async () => {
    const [ours, theirs] = [cached(observations), reference(observations)];
    expect(await ours.metrics()).toBe(await theirs.metrics());
    const strip = (metrics: { values: { labels: object; value: number; metricName?: string }[] }[]) =>
      metrics.map((m) => m.values.map(({ labels, value, metricName }) => ({ labels, value, metricName })));
    expect(strip(await ours.getMetricsAsJSON())).toEqual(strip(await theirs.getMetricsAsJSON()));
  });

  it('starts over on a registry reset', async () => {
    const registry = cached(observations);
    registry.resetMetrics();
    expect(await registry.metrics()).toBe(await reference([]).metrics());
  });
});
