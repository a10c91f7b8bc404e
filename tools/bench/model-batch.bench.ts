import type { Client } from '@modelcontextprotocol/client';
import { RegistryPutProfile, RegistryPutToolset } from '@apphost/contracts';
import { fixtureSpec, profile, token } from '../plane/catalog-harness';
import { benchHttp, edgeFields, edgeFloor } from './bench-http';
import { benchModes, startBenchPlane, type BenchMode } from './bench-plane';
import { startCommitFloor } from './commit-floor';
import { connectDirect } from './direct-client';
import { startBusHop } from './bus-hop';
import { measured, positiveIntEnv, round3, runBench, runLoad, stopAll, WARMUP } from './harness';
import { compositeFloor, floorHops, floorPart, requiredFloorFields, startRedisFloor, tokenCheck, warmFloorParts } from './required-floor';
import { measureRounds, ROUNDS } from './rounds';

/**
 * The model-batch benchmark (`npm run bench:model-batch`): a one-call UI batch (`start-session` of the
 * stateful-nonce fixture) through the gateway — admission, re-list, call, seal, append, commit — against a direct v2
 * SDK `callTool` on another process of the same stdio server, in the same run, at 1 and 16 in flight, on the plane
 * as `npm start` runs it and as `npm run start:services` runs it (`BENCH_MODE`). The floor: the two durable commits
 * a UI batch requires (the seal, the append), raw. JSON lines on stdout (p50/p99, added latency, throughput ratio,
 * the floor, the stage trace); progress on stderr.
 *
 * Run: node -r ./tools/register.cjs tools/bench/model-batch.bench.ts
 */
const TOTAL = positiveIntEnv('BENCH_TOTAL', 200);
const TARGET_ADDED_P50_MS = 5;
const TARGET_RATIO_16 = 0.25;
/** About the size of one sealed start-session result and of its event. */
const FLOOR = [
  { name: 'seal', bytes: 512 },
  { name: 'append', bytes: 512 },
];
/**
 * The least serial bus hops of a UI batch under the design's service split (each service owns its state): the
 * gateway hands the batch over; admission reads the session while the registry owner lists (asked together, one
 * step); the owner re-lists on the target generation and calls (counted as one hop though today they are two); the
 * seal; the append after it.
 */
const HOPS = [
  'gateway → governed-operations',
  'lifecycle-store (session) beside the registry owner (discovery listing)',
  'registry owner (re-list, then the call)',
  'sealed-result-store (the seal)',
  'lifecycle-store (the append)',
];

async function runMode(mode: BenchMode): Promise<void> {
  const plane = await startBenchPlane(mode, { CATALOG_APP_TOOLSETS: JSON.stringify({ bench: [{ toolsetId: 'nonce' }] }) });
  // The direct baseline's client, and the composite floor's two (one a discovery class, as the registry owner holds them).
  const clients: Client[] = [];
  // The producing-generation record (about its size) the batch writes host-privately before the append.
  const producerRecord = await startRedisFloor(640);
  const floor = await startCommitFloor(FLOOR);
  const hop = await startBusHop(plane);
  try {
    await plane.client.request(RegistryPutProfile, { profileId: 'p1', profile: profile() });
    const put = await plane.client.request(RegistryPutToolset, { toolsetId: 'nonce', spec: fixtureSpec('stateful-nonce', 'p1') }, { timeoutMs: 30_000 });
    if (put.status.state !== 'PROFILE_BOUND') throw new Error(`toolset nonce is ${put.status.state}, not PROFILE_BOUND`);
    for (const name of ['bench-direct', 'bench-floor-app-safe', 'bench-floor-full']) clients.push(await connectDirect('stateful-nonce', name));
    const [direct, appSafe, full] = clients;
    const bearer = await token('bench');
    const http = benchHttp(plane);
    const created = await http('POST', '/v1/sessions', { bearer, origin: null, body: { appName: 'bench', sessionId: 'bench-1' } });
    if (created.status !== 201) throw new Error(`session create: ${created.status} ${created.text}`);
    let n = 0;
    const viaGateway = async () => {
      const res = await http('POST', '/v1/sessions/bench-1/tool-batches', {
        bearer,
        origin: null,
        body: { appName: 'bench', invocationId: `inv-${n++}`, calls: [{ tool: 'start-session', arguments: {} }] },
      });
      if (res.status !== 200) throw new Error(`batch: ${res.status} ${res.text}`);
    };
    const directCall = () => direct.callTool({ name: 'start-session', arguments: {} });
    // The RFC's fresh listings a UI call needs besides the call: two-class discovery at admission (the bench's profile
    // grants elicitation, so the app-safe and the full class are two connections, listed concurrently) and the re-list
    // on the target generation.
    const listings = async () => {
      await Promise.all([direct.listTools(), direct.listTools()]);
      await direct.listTools();
    };
    const tokenOp = tokenCheck(bearer);
    await runLoad(viaGateway, WARMUP, 1);
    await runLoad(directCall, WARMUP, 1);
    const edgeOp = edgeFloor(http);
    // The required work as one UI batch (`compositeFloor`), in the path's order: the edge and the token check; the
    // hand-over to governed-operations; admission (the session beside both classes' discovery listings); the
    // retained-outcome lookup; the owner's re-list on the target generation, then the call; the producing-generation
    // record; the seal and the append, each a hop and a commit.
    const least = compositeFloor([
      edgeOp,
      tokenOp,
      hop.op,
      [hop.op, () => appSafe.listTools(), () => full.listTools()],
      floor.lookup,
      hop.op,
      () => full.listTools(),
      () => full.callTool({ name: 'start-session', arguments: {} }),
      producerRecord.write,
      hop.op,
      hop.op,
      floor.op,
    ]);
    await warmFloorParts(edgeOp, tokenOp, listings, floor.lookup, producerRecord.write, floor.op, hop.op, least);
    for (const inflight of [1, 16]) {
      // The direct call, the composite floor and the batch in rounds (each figure its median round); the parts after.
      const {
        direct: direct1,
        composite,
        path: batchRun,
        stages,
      } = await measureRounds({
        total: TOTAL,
        inflight,
        direct: directCall,
        composite: least,
        path: viaGateway,
        sources: plane.sources,
        profile: `model-batch-${mode}-${inflight}`,
      });
      const raw = direct1.latency;
      const floorCommits = await measured(floor.op, TOTAL, inflight);
      const commits = floorCommits.latency;
      const edgeRun = await measured(edgeOp, TOTAL, inflight);
      const edge = edgeRun.latency;
      const required = [
        floorPart('edge', edgeRun),
        floorPart('token', await measured(tokenOp, TOTAL, inflight)),
        floorPart('listings', await measured(listings, TOTAL, inflight)),
        // The retained-outcome lookup that keeps one call id from executing twice, before the call.
        floorPart('lookup', await measured(floor.lookup, TOTAL, inflight)),
        floorPart('call', direct1, 0),
        floorPart('producer', await measured(producerRecord.write, TOTAL, inflight)),
        floorPart('commits', floorCommits),
        floorHops(HOPS, await measured(hop.op, TOTAL, inflight)),
      ];
      const batch = batchRun.latency;
      process.stderr.write(
        `${mode} inflight ${inflight}: direct p50 ${raw.p50_ms.toFixed(2)} ms, floor ${commits.p50_ms.toFixed(2)} ms, batch p50 ${batch.p50_ms.toFixed(2)} ms\n`,
      );
      const added = batch.p50_ms - raw.p50_ms;
      const ratio = batch.ops_s / raw.ops_s;
      console.log(
        JSON.stringify({
          bench: 'model-batch',
          mode,
          inflight,
          total: TOTAL,
          rounds: ROUNDS,
          direct_p50_ms: round3(raw.p50_ms),
          direct_p99_ms: round3(raw.p99_ms),
          batch_p50_ms: round3(batch.p50_ms),
          batch_p99_ms: round3(batch.p99_ms),
          added_p50_ms: round3(added),
          added_p99_ms: round3(batch.p99_ms - raw.p99_ms),
          direct_ops_s: round3(raw.ops_s),
          batch_ops_s: round3(batch.ops_s),
          throughput_ratio: round3(ratio),
          floor_commits: FLOOR.map((c) => c.name),
          floor_p50_ms: round3(commits.p50_ms),
          floor_ops_s: round3(commits.ops_s),
          added_over_floor: round3(added / commits.p50_ms),
          ...edgeFields(edge),
          ...requiredFloorFields(mode, required, composite, raw, inflight === 16 ? { ratio: TARGET_RATIO_16 } : { addedP50Ms: TARGET_ADDED_P50_MS }),
          target_added_p50_ms: TARGET_ADDED_P50_MS,
          ...(inflight === 16
            ? { target_ratio: TARGET_RATIO_16, meets_target: added <= TARGET_ADDED_P50_MS && ratio >= TARGET_RATIO_16 }
            : { meets_target: added <= TARGET_ADDED_P50_MS }),
          // CPU of this process per operation: in plane mode the whole plane runs in it (the stdio servers do not).
          direct_node_cpu_ms_per_op: round3(direct1.cpuMsPerOp),
          batch_node_cpu_ms_per_op: round3(batchRun.cpuMsPerOp),
          batch_event_loop_util: round3(batchRun.eventLoopUtil),
        }),
      );
      console.log(JSON.stringify({ bench: 'model-batch', mode, inflight, stage_trace: stages }));
    }
  } finally {
    await stopAll(...clients.map((client) => () => client.close()), floor.stop, hop.stop, producerRecord.stop, plane.stop);
  }
}

runBench('bench:model-batch', async () => {
  for (const mode of benchModes()) await runMode(mode);
});
