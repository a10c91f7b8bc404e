import { profiled } from './cpu-profile';
import { measured, medianRound, positiveIntEnv, type Measured } from './harness';
import { mergeStages, startStageTrace, type MetricsSource, type Stage } from './stage-trace';

/** One level of a path bench: the median round of the direct baseline, of the composite floor and of the path. */
export interface PathRounds {
  direct: Measured;
  composite: Measured;
  path: Measured;
  /** The path's stage trace over all its rounds. */
  stages: Stage[];
}

/** Rounds at each level of the benches that compare a path with its composite floor and its baseline (`BENCH_ROUNDS`). */
export const ROUNDS = positiveIntEnv('BENCH_ROUNDS', 3);

export interface RoundsPlan {
  total: number;
  inflight: number;
  direct: () => Promise<unknown>;
  /** The required work as one operation (`compositeFloor`). */
  composite: () => Promise<unknown>;
  path: () => Promise<unknown>;
  sources: Record<string, MetricsSource>;
  /** Names each path round's CPU profile (`BENCH_CPU_PROFILE`): `<profile>-round-<n>`. */
  profile: string;
}

/** The run whose latency figures are `medianRound`'s pick: the median throughput (the lower middle one for an even count). */
export function medianMeasured(runs: Measured[]): Measured {
  const median = medianRound(runs.map((run) => run.latency));
  return runs[runs.findIndex((run) => run.latency === median)];
}

/**
 * `ROUNDS` rounds at one level of the direct baseline, the composite floor and the path, in that order. The three of a
 * round share the machine's load of its moment, which moves a lot here from one minute to the next; a verdict that
 * compares them is taken on each one's median round.
 */
export async function measureRounds(plan: RoundsPlan): Promise<PathRounds> {
  const runs: Record<'direct' | 'composite' | 'path', Measured[]> = { direct: [], composite: [], path: [] };
  const traces: Stage[][] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    runs.direct.push(await measured(plan.direct, plan.total, plan.inflight));
    runs.composite.push(await measured(plan.composite, plan.total, plan.inflight));
    const tracing = await startStageTrace(plan.sources);
    runs.path.push(await profiled(`${plan.profile}-round-${round}`, () => measured(plan.path, plan.total, plan.inflight)));
    traces.push(await tracing.trace(plan.total));
    const [d, c, p] = [runs.direct, runs.composite, runs.path].map((list) => list[list.length - 1].latency);
    process.stderr.write(
      `${plan.profile} round ${round}/${ROUNDS}: direct p50 ${d.p50_ms.toFixed(2)} ms, composite ${c.p50_ms.toFixed(2)} ms, path ${p.p50_ms.toFixed(2)} ms\n`,
    );
  }
  return { direct: medianMeasured(runs.direct), composite: medianMeasured(runs.composite), path: medianMeasured(runs.path), stages: mergeStages(traces) };
}
