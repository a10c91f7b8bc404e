"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const node_crypto_1 = require("node:crypto");
const pg_1 = require("pg");
const contracts_1 = require("@apphost/contracts");
const testing_1 = require("@apphost/testing");
const catalog_harness_1 = require("../plane/catalog-harness");
const exports_harness_1 = require("../plane/exports-harness");
const harness_1 = require("./harness");
/**
 * The export benchmark (`npm run bench:export`): `POST /v1/exports` through the gateway (authorize, permit, ledger
 * check, sealed resolve, authorized row, recheck, released row) against the raw work it cannot avoid, in the same
 * run: a sealed-record resolve over the bus plus the same two committed audit writes by hand (INSERT authorized,
 * UPDATE released) in export-audit's own table. 1 and 16 in flight; JSON lines on stdout, progress on stderr.
 * Target: export ≥ 0.5× raw throughput at 16 in flight.
 *
 * Run: node -r ./tools/register.cjs tools/bench/export.bench.ts
 */
const TOTAL = (0, harness_1.positiveIntEnv)('BENCH_TOTAL', 200);
const WARMUP = (0, harness_1.positiveIntEnv)('BENCH_WARMUP', 20);
const TARGET_AT_16 = 0.5;
async function main() {
    const nats = await (0, testing_1.startPrivateNats)();
    const prefix = (0, testing_1.uniquePrefix)();
    const pool = new pg_1.Pool({ connectionString: process.env.DATABASE_URL ?? testing_1.TEST_DATABASE_URL, max: 16 });
    let plane;
    try {
        plane = await (0, exports_harness_1.bootExportPlane)(nats.url, prefix, { bench: 'nonce' });
        const policy = { projections: ['content', 'structured', 'full'], maxBytes: 64 * 1024, perPrincipalPerMinute: 10_000, bulkCap: 100_000 };
        await plane.registry.client.request(contracts_1.RegistryPutProfile, {
            profileId: 'p1',
            profile: { ...(0, catalog_harness_1.profile)(), export: { ...policy, projections: [...policy.projections] } },
        });
        await plane.registry.client.request(contracts_1.RegistryPutToolset, { toolsetId: 'nonce', spec: (0, catalog_harness_1.fixtureSpec)('stateful-nonce', 'p1') }, { timeoutMs: 30_000 });
        const auth = { authorization: `Bearer ${await (0, catalog_harness_1.token)('bench', 'runtime export')}`, 'content-type': 'application/json' };
        const base = plane.base;
        const created = await fetch(`${base}/v1/sessions`, { method: 'POST', headers: auth, body: JSON.stringify({ appName: 'bench', sessionId: 'bench-1' }) });
        if (created.status !== 201)
            throw new Error(`session create: ${created.status}`);
        const batch = await fetch(`${base}/v1/sessions/bench-1/tool-batches`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ appName: 'bench', invocationId: 'inv-bench', calls: [{ tool: 'start-session', arguments: {} }] }),
        });
        if (batch.status !== 200)
            throw new Error(`batch: ${batch.status}`);
        const ev = (await batch.json());
        const [d] = (0, testing_1.descriptors)(ev);
        const key = {
            session: { tenant: 'acme', appName: 'bench', userId: 'bench', sessionId: 'bench-1' },
            incarnation: ev.incarnation,
            eventId: String(ev.eventId),
            functionCallId: d.correlation.functionCallId,
            recordId: d.sealedResultRef.recordId,
        };
        const sealed = plane.sealed.client;
        const table = `"${prefix}export_audit".export_attempts`;
        let n = 0;
        const viaGateway = async () => {
            const res = await fetch(`${base}/v1/exports`, {
                method: 'POST',
                headers: auth,
                body: JSON.stringify({
                    appName: 'bench',
                    sessionId: 'bench-1',
                    eventId: ev.eventId,
                    functionCallId: key.functionCallId,
                    operationId: `op-${n++}`,
                    projection: 'full',
                }),
            });
            if (res.status !== 200)
                throw new Error(`export: ${res.status} ${await res.text()}`);
            await res.json();
        };
        const raw = async () => {
            await sealed.request(contracts_1.SealedResolve, { key });
            const operationId = `raw-${n++}`;
            await pool.query(`INSERT INTO ${table} (tenant, operation_id, export_id, app_name, user_id, session_id, incarnation, event_id, function_call_id, record_id, toolset_id,
                               purpose, projection, principal_digest, decision, status, byte_count, retain_until)
         VALUES ('acme', $1, $2, 'bench', 'bench', 'bench-raw', $3, $4, $5, $6, 'nonce', 'export', 'full', $7, 'allow', 'authorized', 100, now() + interval '90 days')`, [operationId, (0, node_crypto_1.randomUUID)(), ev.incarnation, ev.eventId, key.functionCallId, key.recordId, '0'.repeat(64)]);
            await pool.query(`UPDATE ${table} SET status = 'released', release_count = release_count + 1, released_at = now(), updated_at = now() WHERE tenant = 'acme' AND operation_id = $1`, [operationId]);
        };
        await (0, harness_1.runLoad)(viaGateway, WARMUP, 1);
        await (0, harness_1.runLoad)(raw, WARMUP, 1);
        for (const inflight of [1, 16]) {
            const baseline = await (0, harness_1.runLoad)(raw, TOTAL, inflight);
            const exported = await (0, harness_1.runLoad)(viaGateway, TOTAL, inflight);
            process.stderr.write(`inflight ${inflight}: raw p50 ${baseline.p50_ms.toFixed(2)} ms, export p50 ${exported.p50_ms.toFixed(2)} ms\n`);
            const ratio = exported.ops_s / baseline.ops_s;
            console.log(JSON.stringify({
                bench: 'export',
                inflight,
                total: TOTAL,
                raw_p50_ms: (0, harness_1.round3)(baseline.p50_ms),
                raw_p99_ms: (0, harness_1.round3)(baseline.p99_ms),
                export_p50_ms: (0, harness_1.round3)(exported.p50_ms),
                export_p99_ms: (0, harness_1.round3)(exported.p99_ms),
                raw_ops_s: (0, harness_1.round3)(baseline.ops_s),
                export_ops_s: (0, harness_1.round3)(exported.ops_s),
                throughput_ratio: (0, harness_1.round3)(ratio),
                ...(inflight === 16 ? { target: TARGET_AT_16, meets_target: ratio >= TARGET_AT_16 } : {}),
            }));
        }
    }
    finally {
        await plane?.stop().catch(() => undefined);
        await pool.end().catch(() => undefined);
        await nats.stop();
        await (0, testing_1.dropSchemasWithPrefix)(prefix);
    }
}
(0, harness_1.runBench)('bench:export', main);
//# sourceMappingURL=export.bench.js.map