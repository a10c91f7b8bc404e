"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const node_crypto_1 = require("node:crypto");
const client_1 = require("@modelcontextprotocol/client");
const stdio_1 = require("@modelcontextprotocol/client/stdio");
const bus_1 = require("@apphost/bus");
const contracts_1 = require("@apphost/contracts");
const mcp_1 = require("@apphost/mcp");
const testing_1 = require("@apphost/testing");
const harness_1 = require("./harness");
/**
 * `npm run bench:registry`: `callTool` through the bus and the owner's per-instance subject (a registry process
 * owning the stdio connection) against a direct v2 SDK client to the same stdio fixture, interleaved round by
 * round in one run, at 1 and 16 in flight. Target: added p50 ≤ 1 ms. A third variant, `owner-floor`, is the bus
 * round trip to the same owner without an MCP call (a fenced `release` of a lease id never issued), so a run shows
 * how much of the added time is the bus hop itself. See tools/bench/README.md.
 */
const ROUNDS = (0, harness_1.positiveIntEnv)('BENCH_ROUNDS', 5);
const LEVELS = [
    { inflight: 1, total: (0, harness_1.positiveIntEnv)('BENCH_TOTAL_1', 1000) },
    { inflight: 16, total: (0, harness_1.positiveIntEnv)('BENCH_TOTAL_16', 4000) },
];
const TARGET_ADDED_P50_MS = 1;
async function main() {
    const nats = await (0, testing_1.startPrivateNats)();
    const prefix = (0, testing_1.uniquePrefix)();
    const registry = (0, testing_1.spawnTs)('apps/binding-registry/src/main.ts', {
        NATS_URL: nats.url,
        BUS_SUBJECT_PREFIX: testing_1.TEST_BUS_PREFIX,
        DATABASE_URL: testing_1.TEST_DATABASE_URL,
        DATABASE_SCHEMA_PREFIX: prefix,
        INSTANCE_ID: 'bench-registry',
        REGISTRY_ALLOW_STDIO: 'true',
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: '0',
        LOG_LEVEL: 'warn',
    });
    const transport = await (0, testing_1.connectTestTransport)('bench-registry-requester', { natsUrl: nats.url });
    const fixture = (0, testing_1.fixtureServerCommand)('stateful-nonce');
    const direct = new client_1.Client({ name: 'bench-direct', version: '1' }, {});
    try {
        const bus = new bus_1.BusClient({ transport, defaultTimeoutMs: 30_000 });
        await (0, testing_1.eventually)(() => bus.request((0, contracts_1.describeContract)('binding-registry'), {}, { timeoutMs: 1000 }), 60_000, 200);
        await bus.request(contracts_1.RegistryPutToolset, {
            toolsetId: 'bench',
            spec: { connection: { kind: 'stdio', command: fixture.command, args: fixture.args, cwd: fixture.cwd }, profileId: null },
        });
        const handle = await bus.request(contracts_1.RegistryAcquireGeneration, {
            toolsetId: 'bench',
            connectionClass: 'app-safe',
            principal: { tenant: 'bench', subject: 'bench', scopes: [] },
            session: { key: { tenant: 'bench', appName: 'bench', userId: 'bench', sessionId: 'bench' }, incarnation: 1 },
            holder: { kind: 'runner', id: 'bench' },
        });
        await direct.connect(new stdio_1.StdioClientTransport({ command: fixture.command, args: fixture.args, cwd: fixture.cwd, env: (0, stdio_1.getDefaultEnvironment)(), stderr: 'ignore' }));
        let n = 0;
        const neverIssued = (0, node_crypto_1.randomUUID)();
        const calls = {
            'direct-sdk': async () => {
                const r = await direct.callTool({ name: 'whoami', arguments: {} });
                if (r.isError)
                    throw new Error('direct call failed');
            },
            'via-registry': async () => {
                const r = await (0, mcp_1.requestOnGeneration)(bus, contracts_1.ConnCallTool, handle, { callId: `b${++n}`, name: 'whoami', arguments: {} });
                if (r.kind !== 'complete' || r.result['isError'])
                    throw new Error('registry call failed');
            },
            'owner-floor': async () => {
                const r = await (0, mcp_1.requestOnGeneration)(bus, contracts_1.ConnRelease, handle, { leaseId: neverIssued });
                if (r.released)
                    throw new Error('the floor probe released a lease');
            },
        };
        const variants = Object.keys(calls);
        // Warm-up at both levels, so the first measured round does not pay for JIT compilation on either side.
        for (const call of Object.values(calls)) {
            await (0, harness_1.runLoad)(call, 300, 1);
            await (0, harness_1.runLoad)(call, 1000, 16);
        }
        const lines = [];
        for (const level of LEVELS) {
            const rounds = Object.fromEntries(variants.map((v) => [v, []]));
            for (let round = 1; round <= ROUNDS; round++) {
                for (const variant of variants) {
                    const m = await (0, harness_1.runLoad)(calls[variant], level.total, level.inflight);
                    rounds[variant].push(m);
                    process.stderr.write(`inflight=${level.inflight} round=${round} ${variant}: ${m.ops_s.toFixed(0)} ops/s p50=${m.p50_ms.toFixed(3)} ms\n`);
                }
            }
            const median = Object.fromEntries(variants.map((v) => [v, (0, harness_1.medianRound)(rounds[v])]));
            for (const variant of variants) {
                const m = median[variant];
                lines.push({
                    bench: 'registry',
                    variant,
                    inflight: level.inflight,
                    total: m.total,
                    ops_s: Math.round(m.ops_s),
                    p50_ms: (0, harness_1.round3)(m.p50_ms),
                    p99_ms: (0, harness_1.round3)(m.p99_ms),
                });
            }
            // Each via-registry round runs right after its direct round, so the pair shares the machine's load at that
            // moment: the median of the per-round differences is the figure held against the target.
            const paired = rounds['via-registry'].map((r, i) => r.p50_ms - rounds['direct-sdk'][i].p50_ms);
            const added = medianOf(paired);
            lines.push({
                bench: 'registry',
                inflight: level.inflight,
                added_p50_ms: (0, harness_1.round3)(added),
                round_added_p50_ms: paired.map(harness_1.round3),
                added_p50_of_median_rounds_ms: (0, harness_1.round3)(median['via-registry'].p50_ms - median['direct-sdk'].p50_ms),
                owner_floor_p50_ms: (0, harness_1.round3)(medianOf(rounds['owner-floor'].map((r) => r.p50_ms))),
                target_ms: TARGET_ADDED_P50_MS,
                meets_target: added <= TARGET_ADDED_P50_MS,
            });
        }
        for (const line of lines)
            process.stdout.write(`${JSON.stringify(line)}\n`);
    }
    finally {
        await direct.close().catch(() => undefined);
        await transport.close();
        registry.kill('SIGTERM');
        await new Promise((r) => (registry.exitCode !== null ? r(undefined) : registry.once('exit', r)));
        await nats.stop();
        await (0, testing_1.dropSchemasWithPrefix)(prefix);
    }
}
/** The middle value (the lower middle one for an even count, as `medianRound`). */
function medianOf(values) {
    return [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
}
(0, harness_1.runBench)('bench:registry', main);
//# sourceMappingURL=registry.bench.js.map