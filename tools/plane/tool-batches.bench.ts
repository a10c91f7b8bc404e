import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { dropSchemasWithPrefix, fixtureServerCommand, startFakeProviders, startPrivateNats, uniquePrefix } from '@apphost/testing';
import { positiveIntEnv, round3, runBench, runLoad } from '../bench/harness';
import { sourcesOf, startStageTrace } from '../bench/stage-trace';
import { token } from './catalog-harness';
import { bindNonceToolset, bootBatchPlane } from './tool-batches-harness';

/**
 * The model-batch benchmark (`npm run bench:model-batch`): a one-call UI batch
 * (`start-session` of the stateful-nonce fixture) through the gateway — admission, re-list, call, seal, append,
 * commit — against a direct v2 SDK `callTool` on another process of the same stdio server, in the same run, at 1
 * and 16 in flight. JSON lines on stdout (p50/p99, added latency, throughput ratio); progress on stderr.
 *
 * Run: node -r ./tools/register.cjs tools/plane/tool-batches.bench.ts
 */
const TOTAL = positiveIntEnv('BENCH_TOTAL', 200);
const WARMUP = positiveIntEnv('BENCH_WARMUP', 20);

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

async function main(): Promise<void> {
  const nats = await startPrivateNats();
  const prefix = uniquePrefix();
  const providers = await startFakeProviders(nats.url, ['export-audit']);
  const direct = new Client({ name: 'bench-direct', version: '1' }, {});
  let plane: Awaited<ReturnType<typeof bootBatchPlane>> | undefined;
  try {
    plane = await bootBatchPlane(nats.url, prefix, { CATALOG_APP_TOOLSETS: JSON.stringify({ bench: [{ toolsetId: 'nonce' }] }) });
    await bindNonceToolset(plane.registry);
    const fixture = fixtureServerCommand('stateful-nonce');
    await direct.connect(new StdioClientTransport({ ...fixture, env: getDefaultEnvironment(), stderr: 'ignore' }));
    const auth = { authorization: `Bearer ${await token('bench')}`, 'content-type': 'application/json' };
    const base = plane.base;
    const created = await fetch(`${base}/v1/sessions`, { method: 'POST', headers: auth, body: JSON.stringify({ appName: 'bench', sessionId: 'bench-1' }) });
    if (created.status !== 201) throw new Error(`session create: ${created.status}`);
    let n = 0;
    const viaGateway = async () => {
      const res = await fetch(`${base}/v1/sessions/bench-1/tool-batches`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ appName: 'bench', invocationId: `inv-${n++}`, calls: [{ tool: 'start-session', arguments: {} }] }),
      });
      if (res.status !== 200) throw new Error(`batch: ${res.status} ${await res.text()}`);
      await res.json();
    };
    const directCall = () => direct.callTool({ name: 'start-session', arguments: {} });
    await runLoad(viaGateway, WARMUP, 1);
    await runLoad(directCall, WARMUP, 1);
    for (const inflight of [1, 16]) {
      const rawCpu = process.cpuUsage();
      const raw = await runLoad(directCall, TOTAL, inflight);
      const rawCpuMs = cpuMsSince(rawCpu);
      const tracing = await startStageTrace(sourcesOf(plane));
      const batchCpu = process.cpuUsage();
      const batch = await runLoad(viaGateway, TOTAL, inflight);
      const batchCpuMs = cpuMsSince(batchCpu);
      const stages = await tracing.trace(TOTAL);
      process.stderr.write(`inflight ${inflight}: direct p50 ${raw.p50_ms.toFixed(2)} ms, batch p50 ${batch.p50_ms.toFixed(2)} ms\n`);
      console.log(
        JSON.stringify({
          bench: 'model-batch',
          inflight,
          total: TOTAL,
          direct_p50_ms: round3(raw.p50_ms),
          direct_p99_ms: round3(raw.p99_ms),
          batch_p50_ms: round3(batch.p50_ms),
          batch_p99_ms: round3(batch.p99_ms),
          added_p50_ms: round3(batch.p50_ms - raw.p50_ms),
          added_p99_ms: round3(batch.p99_ms - raw.p99_ms),
          direct_ops_s: round3(raw.ops_s),
          batch_ops_s: round3(batch.ops_s),
          throughput_ratio: round3(batch.ops_s / raw.ops_s),
          // CPU of this process per operation: the whole plane runs in it (the stdio servers do not).
          direct_node_cpu_ms_per_op: round3(rawCpuMs / TOTAL),
          batch_node_cpu_ms_per_op: round3(batchCpuMs / TOTAL),
        }),
      );
      console.log(JSON.stringify({ bench: 'model-batch', inflight, stage_trace: stages }));
    }
  } finally {
    await direct.close().catch(() => undefined);
    await plane?.stop().catch(() => undefined);
    await providers.stop().catch(() => undefined);
    await nats.stop();
    await dropSchemasWithPrefix(prefix);
  }
}

runBench('bench:model-batch', main);
