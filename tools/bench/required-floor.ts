import { createSecretKey, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import Redis from 'ioredis';
import { jwtVerify } from 'jose';
import { TEST_REDIS_URL } from '@apphost/testing';
import { JWT } from '../plane/catalog-harness';
import type { BenchMode } from './bench-plane';
import { positiveIntEnv, round3, runLoad, type Measured, type Measurement } from './harness';

/**
 * One part of the work a governed path cannot skip, measured raw in the bench's process: what it adds to the path's
 * latency over the direct baseline (serial on the path, so the parts' figures add up) and the CPU it costs.
 */
export interface FloorPart {
  name: string;
  addedP50Ms: number;
  cpuMsPerOp: number;
  /** For `hops`: the serial steps counted, in order. */
  serial?: readonly string[];
}

export const floorPart = (name: string, run: Measured, addedP50Ms = run.latency.p50_ms): FloorPart => ({ name, addedP50Ms, cpuMsPerOp: run.cpuMsPerOp });

/**
 * The bus hops the design puts on a path (`serial`, one after another: each service owns its state, so the path asks
 * each owner in turn), each one a measured `BusHop` (`bus-hop.ts`): its latency and CPU times their count. Work
 * that could share a hop is counted as one, so this is the least the split costs, never more.
 */
export const floorHops = (serial: readonly string[], hop: Measured): FloorPart => ({ ...floorRepeated('hops', serial.length, hop), serial });

/**
 * A part the path makes `count` times (a fresh read at the check and again at the recheck): its CPU times the count,
 * its latency times the `serial` ones among them (two asked beside each other wait once).
 */
export const floorRepeated = (name: string, count: number, run: Measured, serial = count): FloorPart => ({
  name,
  addedP50Ms: serial * run.latency.p50_ms,
  cpuMsPerOp: count * run.cpuMsPerOp,
});

/** Runs of each floor part before any is measured (`BENCH_FLOOR_WARMUP`), at 16 in flight. */
const FLOOR_WARMUP = positiveIntEnv('BENCH_FLOOR_WARMUP', 3000);

/**
 * Warms the floor parts up before they are measured. A part is a small operation that settles slowly here: the edge
 * (`GET /healthz`) cost ≈ 0.95 ms of CPU a request over its first thousand on a freshly started plane and ≈ 0.4–0.5 ms
 * after two to three thousand, so a part measured after a few dozen runs overstated the floor twofold.
 */
export async function warmFloorParts(...parts: Array<() => Promise<unknown>>): Promise<void> {
  for (const part of parts) await runLoad(part, FLOOR_WARMUP, 16);
}

/** The gateway's token check, as every request through it pays it: the bench's HS256 JWT verified with its issuer and audience. */
export function tokenCheck(bearer: string): () => Promise<void> {
  const key = createSecretKey(Buffer.from(JWT.secret, 'utf8'));
  return async () => {
    await jwtVerify(bearer, key, { issuer: JWT.issuer, audience: JWT.audience, algorithms: ['HS256'], requiredClaims: ['exp', 'sub'] });
  };
}

/** The coordination store's round trips a path's design requires (a View's lease, a producing-generation record), raw. */
export interface RedisFloor {
  /** One `SET … PX … NX` of `bytes` under a fresh key. */
  write(): Promise<void>;
  /** One `GET` of a stored key. */
  read(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisFloor(bytes: number): Promise<RedisFloor> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const prefix = `bench-floor:${randomBytes(4).toString('hex')}:`;
  const value = randomBytes(bytes).toString('base64').slice(0, bytes);
  await redis.set(`${prefix}read`, value, 'PX', 600_000);
  let n = 0;
  return {
    async write() {
      await redis.set(`${prefix}${++n}`, value, 'PX', 60_000, 'NX');
    },
    async read() {
      await redis.get(`${prefix}read`);
    },
    async stop() {
      await redis.quit();
    },
  };
}

/** One step of the composite floor: a part, or parts the design lets run side by side (awaited together). */
export type FloorStep = (() => Promise<unknown>) | ReadonlyArray<() => Promise<unknown>>;

/**
 * The required work as one operation (decision 0021): every floor part, as many times as the path makes it, in the
 * path's order — what the least implementation of the design would do for one operation, and nothing else. Measured at
 * the path's level, it pays what the parts measured alone in a loop do not: each part runs once between the others, on
 * caches and branch history they left behind, as the path's own steps do.
 */
export function compositeFloor(steps: readonly FloorStep[]): () => Promise<void> {
  return async () => {
    for (const step of steps) {
      if (typeof step === 'function') await step();
      else await Promise.all(step.map((part) => part()));
    }
  };
}

/**
 * The path's required floor, measured in the same run, at this level:
 *
 * - `required_floor`: its parts, each measured alone in a loop (where the floor's time goes); their sum
 *   `required_floor_added_p50_ms` and, in `plane` mode, `required_floor_ceiling_ops_s` / `required_floor_ceiling_ratio`
 *   (1000 ÷ the parts' CPU per operation, over the direct baseline's throughput);
 * - `required_floor_composite`: the same parts run as one operation (`compositeFloor`, the direct call or raw baseline
 *   included), measured like the path: its p50 and what it adds over the direct baseline's, its throughput and ratio
 *   to the direct baseline's, this process's CPU per operation, and `machine_ceiling_ratio`: the most operations per
 *   second this machine's cores could serve at that CPU each (a lower bound of the least implementation's CPU: what
 *   the composite makes other processes do — the gateway's edge, the hops' responders, the stores — only adds to it),
 *   over the direct baseline's throughput.
 *
 * `floor_prevents_target` judges the level's own target by the composite, the least implementation measured rather
 * than summed: at 1 in flight, whether it adds more than the added-latency target; at 16, whether its ratio is below
 * the throughput target — in `plane` mode its measured ratio (the gateway and every service share this process's one
 * event loop, as the composite does), in `services` mode its machine ceiling (the path spreads its CPU over processes,
 * but not over more cores than the machine has). `null` at a level with no target.
 */
export function requiredFloorFields(
  mode: BenchMode,
  parts: readonly FloorPart[],
  composite: Measured,
  direct: Measurement,
  target: { addedP50Ms: number } | { ratio: number } | null,
): Record<string, unknown> {
  const added = parts.reduce((sum, p) => sum + p.addedP50Ms, 0);
  const cpu = parts.reduce((sum, p) => sum + p.cpuMsPerOp, 0);
  const ceiling = 1000 / cpu;
  const compositeAdded = composite.latency.p50_ms - direct.p50_ms;
  const compositeRatio = composite.latency.ops_s / direct.ops_s;
  const machineCeilingRatio = (availableParallelism() * 1000) / composite.cpuMsPerOp / direct.ops_s;
  const prevents =
    target === null
      ? null
      : 'addedP50Ms' in target
        ? compositeAdded > target.addedP50Ms
        : (mode === 'plane' ? compositeRatio : machineCeilingRatio) < target.ratio;
  return {
    required_floor: Object.fromEntries(
      parts.map((p) => [p.name, { added_p50_ms: round3(p.addedP50Ms), cpu_ms_per_op: round3(p.cpuMsPerOp), ...(p.serial ? { serial: p.serial } : {}) }]),
    ),
    required_floor_added_p50_ms: round3(added),
    ...(mode === 'plane' ? { required_floor_ceiling_ops_s: round3(ceiling), required_floor_ceiling_ratio: round3(ceiling / direct.ops_s) } : {}),
    required_floor_composite: {
      p50_ms: round3(composite.latency.p50_ms),
      added_p50_ms: round3(compositeAdded),
      ops_s: round3(composite.latency.ops_s),
      ratio: round3(compositeRatio),
      cpu_ms_per_op: round3(composite.cpuMsPerOp),
      event_loop_util: round3(composite.eventLoopUtil),
      machine_ceiling_ratio: round3(machineCeilingRatio),
    },
    floor_prevents_target: prevents,
  };
}
