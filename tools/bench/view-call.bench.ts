import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { ConnCallTool, RegistryAcquireGeneration } from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { fixtureServerCommand } from '@apphost/testing';
import { fixtureSpec } from '../plane/catalog-harness';
import { openView, resultOf, startRpcPlane } from '../plane/view-rpc-harness';
import { viewProfile } from '../plane/views-harness';
import { positiveIntEnv, round3, runBench, runLoad, type Measurement } from './harness';
import { sourcesOf, startStageTrace } from './stage-trace';

/**
 * The View call benchmark (`npm run bench:view-call`): one View `tools/call` through the gateway
 * (`POST /v1/views/{viewId}/rpc`: caller, View and grant, message admission, rate and queue slot, live id, the
 * post-queue barrier, the call on the View's bound generation through the registry owner, result validation, the
 * app audit event) against a direct v2 SDK `callTool` on another process of the same stdio fixture, at 1 and 16 in
 * flight. The floor the design imposes is measured too: the one call on the bound generation over the bus
 * (`binding-registry.call-tool.v1` via the owner's per-instance subject), which no View call can skip. The tool is
 * the stateful-nonce fixture's app-only `echo`. Targets (the performance issue owns them): ≤ 3 ms added p50,
 * ≥ 0.4× direct throughput at 16 in flight. JSON lines on stdout; progress on stderr.
 *
 * Run: node -r ./tools/register.cjs tools/bench/view-call.bench.ts
 */
const TOTAL = positiveIntEnv('BENCH_TOTAL', 400);
const WARMUP = positiveIntEnv('BENCH_WARMUP', 20);
const TARGET_ADDED_P50_MS = 3;
const TARGET_RATIO_16 = 0.4;
/** How long the plane's idle CPU is measured before the levels. */
const IDLE_MS = 3_000;

async function main(): Promise<void> {
  const bench = await startRpcPlane({
    apps: { bench: ['bench'] },
    // The default profile allows 600 calls a View a minute: a benchmark makes more.
    profiles: { p1: { ...viewProfile(), rpc: { perViewPerMinute: 100_000, perSessionPerMinute: 1_000_000, queueDepth: 64 } } },
    toolsets: { bench: fixtureSpec('stateful-nonce', 'p1') },
  });
  const direct = new Client({ name: 'bench-direct', version: '1' }, {});
  try {
    const bearer = await bench.bearer('bench');
    const view = await openView(bench.http, bearer, { appName: 'bench', sessionId: 'bench-call', tool: 'start-session' });
    const args = { text: 'hello from the View', count: 3 };
    const viaGateway = async () => resultOf(await bench.rpc.call(view, 'echo', args));

    const command = fixtureServerCommand('stateful-nonce');
    await direct.connect(new StdioClientTransport({ ...command, env: getDefaultEnvironment(), stderr: 'ignore' }));
    const directCall = () => direct.callTool({ name: 'echo', arguments: args });

    // The floor: the call on the View's own generation (app-safe, this session), as governed-operations makes it.
    const handle = await bench.plane.registry.client.request(
      RegistryAcquireGeneration,
      {
        toolsetId: 'bench',
        connectionClass: 'app-safe',
        principal: { tenant: 'acme', subject: 'bench', scopes: ['runtime', 'view'] },
        session: { key: { tenant: 'acme', appName: 'bench', userId: 'bench', sessionId: 'bench-call' }, incarnation: view.incarnation },
        holder: { kind: 'view', id: 'bench-floor' },
      },
      { timeoutMs: 30_000 },
    );
    let floorId = 0;
    const floorCall = () =>
      requestOnGeneration(bench.plane.registry.client, ConnCallTool, handle, { callId: `floor-${++floorId}`, name: 'echo', arguments: args });

    await runLoad(directCall, WARMUP, 1);
    await runLoad(floorCall, WARMUP, 1);
    await runLoad(viaGateway, WARMUP, 1);
    // The plane's own background CPU (heartbeats, sweeps, pollers) while nothing is asked: part of every per-call figure.
    const idleSince = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idle = process.cpuUsage(idleSince);
    console.log(JSON.stringify({ bench: 'view-call', idle_node_cpu_ms_per_s: round3((idle.user + idle.system) / IDLE_MS) }));
    for (const inflight of [1, 16]) {
      const raw = await runLoad(directCall, TOTAL, inflight);
      const floor = await runLoad(floorCall, TOTAL, inflight);
      const tracing = await startStageTrace(sourcesOf(bench.plane));
      const cpu = process.cpuUsage();
      const viewCall = await runLoad(viaGateway, TOTAL, inflight);
      const viewCpu = cpuMsPerOp(cpu, TOTAL);
      const stages = await tracing.trace(TOTAL);
      process.stderr.write(
        `inflight ${inflight}: direct p50 ${raw.p50_ms.toFixed(2)} ms, floor ${floor.p50_ms.toFixed(2)} ms, view ${viewCall.p50_ms.toFixed(2)} ms\n`,
      );
      console.log(JSON.stringify({ ...line(inflight, raw, floor, viewCall), view_node_cpu_ms_per_op: round3(viewCpu) }));
      console.log(JSON.stringify({ bench: 'view-call', inflight, stage_trace: stages }));
    }
  } finally {
    await direct.close().catch(() => undefined);
    await bench.stop().catch(() => undefined);
  }
}

/**
 * CPU of this process per View call since `since` (user + system): the gateway and every service of the plane run
 * in it, so this is what a call costs the plane (the fixture's and nats-server's processes are not counted). It is
 * the figure to compare between runs on a shared machine, where latency swings with the other load.
 */
function cpuMsPerOp(since: NodeJS.CpuUsage, total: number): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000 / total;
}

function line(inflight: number, raw: Measurement, floor: Measurement, view: Measurement): Record<string, unknown> {
  const added = view.p50_ms - raw.p50_ms;
  const ratio = view.ops_s / raw.ops_s;
  return {
    bench: 'view-call',
    tool: 'echo',
    inflight,
    total: view.total,
    direct_p50_ms: round3(raw.p50_ms),
    direct_p95_ms: round3(raw.p95_ms),
    floor_p50_ms: round3(floor.p50_ms),
    floor_p95_ms: round3(floor.p95_ms),
    view_p50_ms: round3(view.p50_ms),
    view_p95_ms: round3(view.p95_ms),
    added_p50_ms: round3(added),
    above_floor_p50_ms: round3(view.p50_ms - floor.p50_ms),
    direct_ops_s: round3(raw.ops_s),
    floor_ops_s: round3(floor.ops_s),
    view_ops_s: round3(view.ops_s),
    throughput_ratio: round3(ratio),
    floor_ratio: round3(floor.ops_s / raw.ops_s),
    view_vs_floor_ratio: round3(view.ops_s / floor.ops_s),
    target_added_p50_ms: TARGET_ADDED_P50_MS,
    ...(inflight === 16
      ? { target_ratio: TARGET_RATIO_16, meets_target: added <= TARGET_ADDED_P50_MS && ratio >= TARGET_RATIO_16 }
      : { meets_target: added <= TARGET_ADDED_P50_MS }),
  };
}

runBench('bench:view-call', main);
