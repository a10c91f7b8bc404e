import type { ServiceUnderTest } from '@apphost/testing';

/** Where one service's Prometheus text comes from: its `/metrics` route, or its registry in this process. */
export type MetricsSource = () => Promise<string>;

type Totals = Map<string, { count: number; sum: number }>;

/** One bus subject as seen by one service in a measured run, per operation of the bench. */
export interface Stage {
  service: string;
  side: 'handled' | 'requested';
  subject: string;
  per_op: number;
  mean_ms: number;
}

const SERIES = /^apphost_bus_(handled|requested)_seconds_(sum|count)\{service="[^"]+",subject="([^"]+)"[^}]*\} (\S+)$/;

/**
 * The bus stage trace of a benchmark: snapshot every service's bus latency histograms before and after a run, and
 * `trace(operations)` lists each subject each service handled or requested during it — how many per operation and
 * their mean time. Requests a service makes while handling another are nested in that handler's time.
 */
export async function startStageTrace(sources: Record<string, MetricsSource>): Promise<{ trace(operations: number): Promise<Stage[]> }> {
  const snapshot = async (): Promise<Totals> => {
    const totals: Totals = new Map();
    for (const [service, source] of Object.entries(sources)) {
      for (const line of (await source()).split('\n')) {
        const m = SERIES.exec(line);
        if (!m) continue;
        const key = `${service}\u0000${m[1]}\u0000${m[3]}`;
        const entry = totals.get(key) ?? { count: 0, sum: 0 };
        entry[m[2] as 'sum' | 'count'] = Number(m[4]);
        totals.set(key, entry);
      }
    }
    return totals;
  };
  const before = await snapshot();
  return {
    async trace(operations) {
      const after = await snapshot();
      const stages: Stage[] = [];
      for (const [key, { count, sum }] of after) {
        const base = before.get(key) ?? { count: 0, sum: 0 };
        const n = count - base.count;
        if (n <= 0) continue;
        const [service, side, subject] = key.split('\u0000');
        stages.push({ service, side: side as Stage['side'], subject, per_op: round2(n / operations), mean_ms: round2(((sum - base.sum) / n) * 1000) });
      }
      return stages.sort((a, b) => a.service.localeCompare(b.service) || a.subject.localeCompare(b.subject) || a.side.localeCompare(b.side));
    },
  };
}

/** The metrics source of a service booted by the test kit: its own registry, read in this process. */
export const registryOf =
  (service: ServiceUnderTest): MetricsSource =>
  () =>
    service.running.context.metrics.registry.metrics();

/** The metrics sources of the named services of a booted plane. */
export function sourcesOf(services: object): Record<string, MetricsSource> {
  return Object.fromEntries(
    Object.entries(services)
      .filter((entry): entry is [string, ServiceUnderTest] => typeof (entry[1] as ServiceUnderTest | undefined)?.running?.context === 'object')
      .map(([name, service]) => [name, registryOf(service)]),
  );
}

/** The stage traces of several rounds as one: requests per operation over all of them, mean time weighted by count. */
export function mergeStages(rounds: Stage[][]): Stage[] {
  const merged = new Map<string, Stage & { n: number }>();
  for (const stages of rounds) {
    for (const s of stages) {
      const key = `${s.service}\u0000${s.side}\u0000${s.subject}`;
      const m = merged.get(key) ?? { ...s, per_op: 0, mean_ms: 0, n: 0 };
      m.mean_ms = (m.mean_ms * m.n + s.mean_ms * s.per_op) / (m.n + s.per_op || 1);
      m.n += s.per_op;
      m.per_op += s.per_op / rounds.length;
      merged.set(key, m);
    }
  }
  return [...merged.values()].map(({ n: _n, ...s }) => ({ ...s, per_op: Math.round(s.per_op * 100) / 100, mean_ms: Math.round(s.mean_ms * 100) / 100 }));
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
