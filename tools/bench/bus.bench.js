"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
const node_child_process_1 = require("node:child_process");
const node_path_1 = __importDefault(require("node:path"));
const node_readline_1 = require("node:readline");
const nats_1 = require("nats");
const bus_1 = require("@apphost/bus");
const echo_contract_1 = require("./echo.contract");
const harness_1 = require("./harness");
/**
 * `npm run bench:bus`: the typed bus (BusClient -> BusServer over NATS, zod on request and response) against raw
 * NATS request-reply, interleaved round by round in one run. See tools/bench/README.md.
 */
const ROUNDS = (0, harness_1.positiveIntEnv)('BENCH_ROUNDS', 3);
const LEVELS = [
    { inflight: 1, total: (0, harness_1.positiveIntEnv)('BENCH_TOTAL_1', 5000), target: 0.6 },
    { inflight: 64, total: (0, harness_1.positiveIntEnv)('BENCH_TOTAL_64', 30000), target: 0.8 },
];
// raw-nats: the client as most code uses it; raw-nats-tuned: with the same `noAsyncTraces` option the bus's
// transport sets, so the ratio is reported against both and the option cannot flatter the figure.
const VARIANTS = ['raw-nats', 'raw-nats-tuned', 'typed-bus'];
const repoRoot = node_path_1.default.resolve(__dirname, '..', '..');
async function main() {
    const runId = (0, echo_contract_1.newRunId)();
    const responder = await startResponder(runId);
    const raw = await (0, nats_1.connect)({ servers: echo_contract_1.NATS_URL, name: `bench-raw-requester-${runId}` });
    const rawTuned = await (0, nats_1.connect)({ servers: echo_contract_1.NATS_URL, name: `bench-raw-tuned-requester-${runId}`, noAsyncTraces: true });
    const transport = await bus_1.NatsTransport.connect({ servers: echo_contract_1.NATS_URL, name: `bench-typed-requester-${runId}` });
    try {
        const contract = (0, echo_contract_1.echoContract)(runId);
        const client = new bus_1.BusClient({ transport, defaultTimeoutMs: echo_contract_1.TIMEOUT_MS });
        const payload = (0, echo_contract_1.samplePayload)();
        const rawBytes = (0, bus_1.encodeJson)(payload);
        const calls = {
            'raw-nats': async () => {
                const reply = await raw.request((0, echo_contract_1.rawSubject)(runId), rawBytes, { timeout: echo_contract_1.TIMEOUT_MS });
                if (reply.data.byteLength !== rawBytes.byteLength)
                    throw new Error('raw echo returned a different payload');
            },
            'raw-nats-tuned': async () => {
                const reply = await rawTuned.request((0, echo_contract_1.rawSubject)(runId), rawBytes, { timeout: echo_contract_1.TIMEOUT_MS });
                if (reply.data.byteLength !== rawBytes.byteLength)
                    throw new Error('raw echo returned a different payload');
            },
            'typed-bus': () => client.request(contract, payload),
        };
        for (const level of LEVELS) {
            for (const v of VARIANTS)
                await (0, harness_1.runLoad)(calls[v], Math.ceil(level.total / 5), level.inflight); // warm-up
        }
        const lines = [];
        const ratios = [];
        for (const level of LEVELS) {
            const rounds = { 'raw-nats': [], 'raw-nats-tuned': [], 'typed-bus': [] };
            for (let r = 1; r <= ROUNDS; r++) {
                for (const v of VARIANTS) {
                    const m = await (0, harness_1.runLoad)(calls[v], level.total, level.inflight);
                    rounds[v].push(m);
                    process.stderr.write(`round ${r}/${ROUNDS} inflight=${level.inflight} ${v}: ${Math.round(m.ops_s)} ops/s p99 ${(0, harness_1.round3)(m.p99_ms)} ms\n`);
                }
            }
            const med = Object.fromEntries(VARIANTS.map((v) => [v, (0, harness_1.medianRound)(rounds[v])]));
            for (const v of VARIANTS)
                lines.push(resultLine(v, level.inflight, med[v]));
            const ratio = med['typed-bus'].ops_s / med['raw-nats'].ops_s;
            const ratioTuned = med['typed-bus'].ops_s / med['raw-nats-tuned'].ops_s;
            ratios.push({
                bench: 'bus',
                inflight: level.inflight,
                ratio_ops: (0, harness_1.round3)(ratio),
                ratio_ops_vs_tuned_raw: (0, harness_1.round3)(ratioTuned),
                target: level.target,
                meets_target: ratio >= level.target,
            });
        }
        for (const line of [...lines, ...ratios])
            process.stdout.write(`${JSON.stringify(line)}\n`);
    }
    finally {
        await Promise.allSettled([raw.close(), rawTuned.close(), transport.close()]);
        responder.kill('SIGTERM');
    }
}
function resultLine(variant, inflight, m) {
    return { bench: 'bus', variant, inflight, total: m.total, ops_s: Math.round(m.ops_s), p50_ms: (0, harness_1.round3)(m.p50_ms), p99_ms: (0, harness_1.round3)(m.p99_ms) };
}
/** Spawns bus-responder.ts and resolves once it prints "ready"; its stdin stays open so it dies with us. */
function startResponder(runId) {
    const child = (0, node_child_process_1.spawn)(process.execPath, ['-r', node_path_1.default.join(repoRoot, 'tools/register.cjs'), node_path_1.default.join(__dirname, 'bus-responder.ts'), runId], {
        cwd: repoRoot,
        stdio: ['pipe', 'pipe', 'inherit'],
    });
    process.on('exit', () => child.kill('SIGTERM'));
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('bus-responder did not become ready within 60 s')), 60_000);
        child.once('exit', (code) => reject(new Error(`bus-responder exited with code ${code} before it was ready`)));
        (0, node_readline_1.createInterface)({ input: child.stdout }).on('line', (line) => {
            if (line.trim() !== 'ready')
                return;
            clearTimeout(timer);
            resolve(child);
        });
    });
}
(0, harness_1.runBench)('bench:bus', main);
//# sourceMappingURL=bus.bench.js.map