"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.round3 = void 0;
exports.runLoad = runLoad;
exports.percentile = percentile;
exports.medianRound = medianRound;
exports.positiveIntEnv = positiveIntEnv;
exports.runBench = runBench;
const node_perf_hooks_1 = require("node:perf_hooks");
/**
 * Closed-loop load: `inflight` workers each issue the next call as soon as their previous one returns, until
 * `total` calls have been made. The first failing call stops every worker and rejects.
 */
async function runLoad(call, total, inflight) {
    const latencies = new Float64Array(total);
    let issued = 0;
    let failed = false;
    const worker = async () => {
        while (!failed && issued < total) {
            const i = issued++;
            const t0 = node_perf_hooks_1.performance.now();
            try {
                await call();
            }
            catch (error) {
                failed = true;
                throw error;
            }
            latencies[i] = node_perf_hooks_1.performance.now() - t0;
        }
    };
    const started = node_perf_hooks_1.performance.now();
    await Promise.all(Array.from({ length: Math.min(inflight, total) }, worker));
    const seconds = (node_perf_hooks_1.performance.now() - started) / 1000;
    latencies.sort();
    return { total, ops_s: total / seconds, p50_ms: percentile(latencies, 0.5), p99_ms: percentile(latencies, 0.99) };
}
/** Nearest-rank percentile of an ascending array. */
function percentile(sorted, p) {
    if (sorted.length === 0)
        return NaN;
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}
/** The round with the median throughput (the lower middle one for an even count). */
function medianRound(rounds) {
    const byOps = [...rounds].sort((a, b) => a.ops_s - b.ops_s);
    return byOps[Math.floor((byOps.length - 1) / 2)];
}
function positiveIntEnv(name, fallback) {
    const raw = process.env[name];
    if (raw === undefined || raw === '')
        return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1)
        throw new Error(`${name} must be a positive integer (got ${JSON.stringify(raw)})`);
    return value;
}
const round3 = (n) => Math.round(n * 1000) / 1000;
exports.round3 = round3;
/** Runs a bench's `main`: exits 0 when it is done (open handles do not keep it alive), 1 with the stack on a failure. */
function runBench(name, main) {
    main().then(() => process.exit(0), (error) => {
        process.stderr.write(`${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
        process.exit(1);
    });
}
//# sourceMappingURL=harness.js.map