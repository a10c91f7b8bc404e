"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const client_1 = require("@modelcontextprotocol/client");
const stdio_1 = require("@modelcontextprotocol/client/stdio");
const testing_1 = require("@apphost/testing");
const harness_1 = require("../bench/harness");
const catalog_harness_1 = require("./catalog-harness");
const tool_batches_harness_1 = require("./tool-batches-harness");
/**
 * The model-batch benchmark (`npm run bench:model-batch`): a one-call UI batch
 * (`start-session` of the stateful-nonce fixture) through the gateway — admission, re-list, call, seal, append,
 * commit — against a direct v2 SDK `callTool` on another process of the same stdio server, in the same run, at 1
 * and 16 in flight. JSON lines on stdout (p50/p99, added latency, throughput ratio); progress on stderr.
 *
 * Run: node -r ./tools/register.cjs tools/plane/tool-batches.bench.ts
 */
const TOTAL = (0, harness_1.positiveIntEnv)('BENCH_TOTAL', 200);
const WARMUP = (0, harness_1.positiveIntEnv)('BENCH_WARMUP', 20);
async function main() {
    const nats = await (0, testing_1.startPrivateNats)();
    const prefix = (0, testing_1.uniquePrefix)();
    const providers = await (0, testing_1.startFakeProviders)(nats.url, ['export-audit']);
    const direct = new client_1.Client({ name: 'bench-direct', version: '1' }, {});
    let plane;
    try {
        plane = await (0, tool_batches_harness_1.bootBatchPlane)(nats.url, prefix, { CATALOG_APP_TOOLSETS: JSON.stringify({ bench: [{ toolsetId: 'nonce' }] }) });
        await (0, tool_batches_harness_1.bindNonceToolset)(plane.registry);
        const fixture = (0, testing_1.fixtureServerCommand)('stateful-nonce');
        await direct.connect(new stdio_1.StdioClientTransport({ ...fixture, env: (0, stdio_1.getDefaultEnvironment)(), stderr: 'ignore' }));
        const auth = { authorization: `Bearer ${await (0, catalog_harness_1.token)('bench')}`, 'content-type': 'application/json' };
        const base = plane.base;
        const created = await fetch(`${base}/v1/sessions`, { method: 'POST', headers: auth, body: JSON.stringify({ appName: 'bench', sessionId: 'bench-1' }) });
        if (created.status !== 201)
            throw new Error(`session create: ${created.status}`);
        let n = 0;
        const viaGateway = async () => {
            const res = await fetch(`${base}/v1/sessions/bench-1/tool-batches`, {
                method: 'POST',
                headers: auth,
                body: JSON.stringify({ appName: 'bench', invocationId: `inv-${n++}`, calls: [{ tool: 'start-session', arguments: {} }] }),
            });
            if (res.status !== 200)
                throw new Error(`batch: ${res.status} ${await res.text()}`);
            await res.json();
        };
        const directCall = () => direct.callTool({ name: 'start-session', arguments: {} });
        await (0, harness_1.runLoad)(viaGateway, WARMUP, 1);
        await (0, harness_1.runLoad)(directCall, WARMUP, 1);
        for (const inflight of [1, 16]) {
            const raw = await (0, harness_1.runLoad)(directCall, TOTAL, inflight);
            const batch = await (0, harness_1.runLoad)(viaGateway, TOTAL, inflight);
            process.stderr.write(`inflight ${inflight}: direct p50 ${raw.p50_ms.toFixed(2)} ms, batch p50 ${batch.p50_ms.toFixed(2)} ms\n`);
            console.log(JSON.stringify({
                bench: 'model-batch',
                inflight,
                total: TOTAL,
                direct_p50_ms: (0, harness_1.round3)(raw.p50_ms),
                direct_p99_ms: (0, harness_1.round3)(raw.p99_ms),
                batch_p50_ms: (0, harness_1.round3)(batch.p50_ms),
                batch_p99_ms: (0, harness_1.round3)(batch.p99_ms),
                added_p50_ms: (0, harness_1.round3)(batch.p50_ms - raw.p50_ms),
                added_p99_ms: (0, harness_1.round3)(batch.p99_ms - raw.p99_ms),
                direct_ops_s: (0, harness_1.round3)(raw.ops_s),
                batch_ops_s: (0, harness_1.round3)(batch.ops_s),
                throughput_ratio: (0, harness_1.round3)(batch.ops_s / raw.ops_s),
            }));
        }
    }
    finally {
        await direct.close().catch(() => undefined);
        await plane?.stop().catch(() => undefined);
        await providers.stop().catch(() => undefined);
        await nats.stop();
        await (0, testing_1.dropSchemasWithPrefix)(prefix);
    }
}
(0, harness_1.runBench)('bench:model-batch', main);
//# sourceMappingURL=tool-batches.bench.js.map