import { performance } from 'node:perf_hooks';

/** One measured run of `total` calls with `inflight` of them outstanding at any time. */
export interface Measurement {
  total: number;
  ops_s: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
}

/**
 * Closed-loop load: `inflight` workers each issue the next call as soon as their previous one returns, until
 * `total` calls have been made. The first failing call stops every worker and rejects.
 */
export async function runLoad(call: () => Promise<unknown>, total: number, inflight: number): Promise<Measurement> {
  const latencies = new Float64Array(total);
  let issued = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && issued < total) {
      const i = issued++;
      const t0 = performance.now();
      try {
        await call();
      } catch (error) {
        failed = true;
        throw error;
      }
      latencies[i] = performance.now() - t0;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(inflight, total) }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort();
  return { total, ops_s: total / seconds, p50_ms: percentile(latencies, 0.5), p95_ms: percentile(latencies, 0.95), p99_ms: percentile(latencies, 0.99) };
}

/**
 * One run of `runLoad` with this process's CPU per call (user + system, every thread) and how busy its one event loop
 * was: in `plane` mode, what a call costs the plane, and whether the run was bound by that loop (near 1) or by waits.
 */
export interface Measured {
  latency: Measurement;
  cpuMsPerOp: number;
  eventLoopUtil: number;
}

export async function measured(call: () => Promise<unknown>, total: number, inflight: number): Promise<Measured> {
  const since = process.cpuUsage();
  const elu = performance.eventLoopUtilization();
  const latency = await runLoad(call, total, inflight);
  const used = process.cpuUsage(since);
  return { latency, cpuMsPerOp: (used.user + used.system) / 1000 / total, eventLoopUtil: performance.eventLoopUtilization(elu).utilization };
}

/**
 * A round of a bench that reports rounds (the median one, `medianRound`): its latency figures with this process's
 * CPU per operation and how busy its event loop was (near 1: the round was bound by this process, not by what it
 * waited for).
 */
export interface Round extends Measurement {
  nodeCpuMsPerOp: number;
  eventLoopUtil: number;
}

export async function measuredRound(call: () => Promise<unknown>, total: number, inflight: number): Promise<Round> {
  const { latency, cpuMsPerOp, eventLoopUtil } = await measured(call, total, inflight);
  return { ...latency, nodeCpuMsPerOp: cpuMsPerOp, eventLoopUtil };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/** The round with the median throughput (the lower middle one for an even count): one of the rounds given. */
export function medianRound<R extends Measurement>(rounds: R[]): R {
  const byOps = [...rounds].sort((a, b) => a.ops_s - b.ops_s);
  return byOps[Math.floor((byOps.length - 1) / 2)];
}

export function positiveIntEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got ${JSON.stringify(raw)})`);
  return value;
}

/**
 * Warm-up runs of a gateway path and of its direct baseline before either is measured (`BENCH_WARMUP`): a path's CPU
 * settles over its first few hundred operations here (a View bootstrap: 10.7–11.6 ms after 30, 9.2–9.4 ms after 1000).
 */
export const WARMUP = positiveIntEnv('BENCH_WARMUP', 1000);

export const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Stops what a bench started, in order, each even if an earlier one failed: a teardown error never hides the run's. */
export async function stopAll(...stops: Array<() => Promise<unknown>>): Promise<void> {
  for (const stop of stops) await stop().catch(() => undefined);
}

/** Runs a bench's `main`: exits 0 when it is done (open handles do not keep it alive), 1 with the stack on a failure. */
export function runBench(name: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
