"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
const node_child_process_1 = require("node:child_process");
const node_crypto_1 = require("node:crypto");
const node_path_1 = __importDefault(require("node:path"));
const pg_1 = require("pg");
const bus_1 = require("@apphost/bus");
const contracts_1 = require("@apphost/contracts");
const harness_1 = require("./harness");
/**
 * `npm run bench:lifecycle`: the lifecycle-store through the typed bus (its own process, as deployed) against raw `pg`
 * doing the same writes with guarded transactions, interleaved round by round in one run, on the same schema:
 *   - cycle: create (reserve CAS, fenced commit of session row + receipt, receipt-comparing activation) then delete
 *     (CAS to DELETING, purge of row and events, CAS to DELETED), no cascade participants: 6 commits either way;
 *   - append: one event appended to an ACTIVE session (share-locked record, id counter, insert).
 * JSON lines on stdout: one per variant and level (median round), then the bus/raw ratio per workload and level (median
 * of the per-round paired ratios).
 */
const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = (0, harness_1.positiveIntEnv)('BENCH_ROUNDS', 3);
const POOL = 10; // the service's TypeORM pool default; the raw baseline gets the same
const LEVELS = [
    { inflight: 1, cycles: (0, harness_1.positiveIntEnv)('BENCH_CYCLES_1', 200), appends: (0, harness_1.positiveIntEnv)('BENCH_APPENDS_1', 1000) },
    { inflight: 16, cycles: (0, harness_1.positiveIntEnv)('BENCH_CYCLES_16', 1000), appends: (0, harness_1.positiveIntEnv)('BENCH_APPENDS_16', 4000) },
];
const TARGET_AT_16 = 0.5;
const RAW_PREPARED = process.env['BENCH_RAW_PREPARED'] === '1';
const repoRoot = node_path_1.default.resolve(__dirname, '..', '..');
const KEY = `tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`;
async function main() {
    const runId = (0, node_crypto_1.randomBytes)(4).toString('hex');
    const prefix = `b_${runId}_`;
    const schema = `${prefix}lifecycle_store`;
    const service = await startService(prefix);
    const transport = await bus_1.NatsTransport.connect({ servers: NATS_URL, name: `bench-lifecycle-${runId}` });
    const pool = new pg_1.Pool({ connectionString: DATABASE_URL, max: POOL, options: `-c search_path=${schema}` });
    try {
        const bus = new bus_1.BusClient({ transport, defaultTimeoutMs: 30_000 });
        await waitForService(bus);
        let n = 0;
        const nextKey = () => ({ tenant: 'bench', appName: 'bench', userId: 'u', sessionId: `${runId}-${++n}` });
        const appendTargets = { bus: [], raw: [] };
        for (let i = 0; i < 16; i++) {
            for (const target of [appendTargets.bus, appendTargets.raw]) {
                const key = nextKey();
                await bus.request(contracts_1.LifecycleCreateSession, { session: key, creationOperationId: `op-${key.sessionId}` });
                target.push(key);
            }
        }
        let appendTurn = 0;
        const event = { author: 'bench', content: { parts: [{ text: 'x'.repeat(64) }] } };
        const calls = {
            cycle: {
                bus: async () => {
                    const key = nextKey();
                    await bus.request(contracts_1.LifecycleCreateSession, { session: key, creationOperationId: `op-${key.sessionId}` });
                    await bus.request(contracts_1.LifecycleDeleteSession, { session: key });
                },
                'raw-pg': () => rawCycle(pool, nextKey()),
            },
            append: {
                bus: () => bus.request(contracts_1.LifecycleAppendEvents, {
                    session: appendTargets.bus[appendTurn++ % 16],
                    incarnation: 1,
                    provenance: { path: 'user-turn' },
                    events: [event],
                }),
                'raw-pg': () => rawAppend(pool, appendTargets.raw[appendTurn++ % 16], event),
            },
        };
        const lines = [];
        const ratios = [];
        for (const workload of ['cycle', 'append']) {
            for (const level of LEVELS) {
                const total = workload === 'cycle' ? level.cycles : level.appends;
                for (const v of ['raw-pg', 'bus'])
                    await (0, harness_1.runLoad)(calls[workload][v], Math.ceil(total / 5), level.inflight); // warm-up
                const rounds = { 'raw-pg': [], bus: [] };
                for (let r = 1; r <= ROUNDS; r++) {
                    for (const v of ['raw-pg', 'bus']) {
                        const m = await (0, harness_1.runLoad)(calls[workload][v], total, level.inflight);
                        rounds[v].push(m);
                        process.stderr.write(`round ${r}/${ROUNDS} ${workload} inflight=${level.inflight} ${v}: ${Math.round(m.ops_s)} ops/s p99 ${(0, harness_1.round3)(m.p99_ms)} ms\n`);
                    }
                }
                const med = { 'raw-pg': (0, harness_1.medianRound)(rounds['raw-pg']), bus: (0, harness_1.medianRound)(rounds.bus) };
                for (const v of ['raw-pg', 'bus']) {
                    lines.push({
                        bench: 'lifecycle',
                        workload,
                        variant: v,
                        inflight: level.inflight,
                        total,
                        ops_s: Math.round(med[v].ops_s),
                        p50_ms: (0, harness_1.round3)(med[v].p50_ms),
                        p99_ms: (0, harness_1.round3)(med[v].p99_ms),
                    });
                }
                // Paired: each round's bus run directly follows its raw run, so their ratio shares that moment's machine load;
                // the median of the paired ratios (lower middle, as medianRound) is what is judged against the target.
                const paired = rounds.bus.map((m, i) => m.ops_s / rounds['raw-pg'][i].ops_s);
                const ratio = [...paired].sort((a, b) => a - b)[Math.floor((paired.length - 1) / 2)];
                ratios.push({
                    bench: 'lifecycle',
                    workload,
                    inflight: level.inflight,
                    ratio_ops: (0, harness_1.round3)(ratio),
                    round_ratios: paired.map(harness_1.round3),
                    ratio_of_medians: (0, harness_1.round3)(med.bus.ops_s / med['raw-pg'].ops_s),
                    raw_prepared: RAW_PREPARED,
                    ...(level.inflight === 16 ? { target: TARGET_AT_16, meets_target: ratio >= TARGET_AT_16 } : {}),
                });
            }
        }
        for (const line of [...lines, ...ratios])
            process.stdout.write(`${JSON.stringify(line)}\n`);
    }
    finally {
        await Promise.allSettled([transport.close(), pool.end()]);
        await stopService(service);
        await dropSchema(schema);
    }
}
/**
 * The same writes the service makes for create → delete, with the service's own guarded statements and transactions
 * (apps/lifecycle-store/src/sessions/lifecycle.repository.ts), minus what only the service must do (reads that find
 * the state the bench already knows): 6 commits, 8 round trips — reserve (record + fence) | BEGIN, fence-guarded
 * session-row insert, COMMIT | activation joined against the receipt | DELETING | purge of row and events | DELETED.
 */
async function rawCycle(pool, key) {
    const k = [key.tenant, key.appName, key.userId, key.sessionId];
    const op = `op-${key.sessionId}`;
    const digest = 'd'.repeat(64);
    const reserved = await pool.query(stmt(`WITH rec AS (
         INSERT INTO lifecycle_records (tenant, app_name, user_id, session_id, incarnation, state, version, creation_operation_id, reserved_at)
         SELECT $1, $2, $3, $4, 1, 'CREATING', 1, $5, now() WHERE NOT EXISTS (SELECT 1 FROM session_rows WHERE ${KEY})
         ON CONFLICT DO NOTHING RETURNING *
       ), fence AS (
         INSERT INTO session_fences (tenant, app_name, user_id, session_id, fence_token) SELECT tenant, app_name, user_id, session_id, incarnation FROM rec
         ON CONFLICT (tenant, app_name, user_id, session_id) DO UPDATE SET fence_token = EXCLUDED.fence_token, updated_at = now() RETURNING 1
       ) SELECT version FROM rec`, [...k, op]));
    if (reserved.rowCount !== 1)
        throw new Error('raw reserve failed');
    await inTransaction(pool, async (c) => {
        const { rows } = await c.query(stmt(`WITH f AS (UPDATE session_fences SET updated_at = now() WHERE ${KEY} AND fence_token = $5::bigint RETURNING 1),
              s AS (INSERT INTO session_rows (tenant, app_name, user_id, session_id, incarnation, creation_operation_id, import_digest, import_count, last_event_id)
                    SELECT $1, $2, $3, $4, $5::bigint, $6, $7, 0, 0 WHERE EXISTS (SELECT 1 FROM f) ON CONFLICT DO NOTHING RETURNING 1)
         SELECT (SELECT count(*) FROM f) AS fenced, (SELECT count(*) FROM s) AS inserted`, [...k, 1, op, digest]));
        if (Number(rows[0].fenced) !== 1 || Number(rows[0].inserted) !== 1)
            throw new Error('raw fenced commit failed');
    });
    const active = await pool.query(stmt(`UPDATE lifecycle_records r SET state = 'ACTIVE', version = r.version + 1, reserved_at = NULL, updated_at = now() FROM session_rows s
        WHERE r.tenant = $1 AND r.app_name = $2 AND r.user_id = $3 AND r.session_id = $4 AND r.state = 'CREATING' AND r.incarnation = 1 AND r.version = 1
          AND r.creation_operation_id = $5 AND s.tenant = $1 AND s.app_name = $2 AND s.user_id = $3 AND s.session_id = $4
          AND s.incarnation = 1 AND s.creation_operation_id = $5 AND s.import_digest = $6`, [...k, op, digest]));
    if (active.rowCount !== 1)
        throw new Error('raw activate failed');
    const deleting = await pool.query(stmt(`UPDATE lifecycle_records SET state = 'DELETING', version = version + 1, cascade = '{"participants":[],"sessionPurged":false}', updated_at = now()
        WHERE ${KEY} AND state = 'ACTIVE' AND incarnation = 1 AND version = 2`, k));
    if (deleting.rowCount !== 1)
        throw new Error('raw begin-delete failed');
    const purged = await pool.query(stmt(`WITH rec AS (UPDATE lifecycle_records SET version = version + 1, cascade = jsonb_set(cascade, '{sessionPurged}', 'true'), updated_at = now()
                     WHERE ${KEY} AND state = 'DELETING' AND incarnation = 1 AND version = 3 RETURNING *),
            ev AS (DELETE FROM session_events WHERE ${KEY} AND incarnation <= (SELECT incarnation FROM rec) RETURNING 1),
            s AS (DELETE FROM session_rows WHERE ${KEY} AND EXISTS (SELECT 1 FROM rec) RETURNING 1)
       SELECT 1 FROM rec`, k));
    if (purged.rowCount !== 1)
        throw new Error('raw purge failed');
    const deleted = await pool.query(stmt(`UPDATE lifecycle_records SET state = 'DELETED', version = version + 1, updated_at = now()
        WHERE ${KEY} AND state = 'DELETING' AND incarnation = 1 AND version = 4 AND (cascade->>'sessionPurged')::boolean
          AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(cascade->'participants') p WHERE NOT (p->>'purged')::boolean)`, k));
    if (deleted.rowCount !== 1)
        throw new Error('raw delete failed');
}
/** One event appended in a guarded transaction: share-lock the ACTIVE record, advance the id counter, insert. */
async function rawAppend(pool, key, event) {
    const k = [key.tenant, key.appName, key.userId, key.sessionId];
    await inTransaction(pool, async (c) => {
        const record = await c.query(stmt(`SELECT 1 FROM lifecycle_records WHERE ${KEY} AND state = 'ACTIVE' AND incarnation = 1 FOR SHARE`, k));
        if (record.rowCount !== 1)
            throw new Error('not active');
        const seq = await c.query(stmt(`UPDATE session_rows SET last_event_id = last_event_id + 1 WHERE ${KEY} AND incarnation = 1 RETURNING last_event_id`, k));
        const body = { ...event, audience: null, invocationOrigin: 'user', emitter: 'runner', immediateCaller: null };
        await c.query(stmt(`INSERT INTO session_events (tenant, app_name, user_id, session_id, incarnation, event_id, imported, author, audience, invocation_origin, emitter, immediate_caller, body)
         VALUES ($1, $2, $3, $4, 1, $5, false, 'bench', NULL, 'user', 'runner', NULL, $6)`, [...k, seq.rows[0].last_event_id, JSON.stringify(body)]));
    });
}
/**
 * A raw statement: plain text by default (what a straightforward `pg` client sends: parsed and planned on every call),
 * or with `BENCH_RAW_PREPARED=1` a named prepared statement as the service sends them (every statement through
 * `@apphost/persistence`'s query API is one), for a like-for-like ratio that isolates the bus and service overhead.
 */
const statementNames = new Map();
function stmt(text, values) {
    if (!RAW_PREPARED)
        return { text, values };
    let name = statementNames.get(text);
    if (!name)
        statementNames.set(text, (name = `bench_raw_${statementNames.size}`));
    return { name, text, values };
}
async function inTransaction(pool, work) {
    const c = await pool.connect();
    try {
        await c.query('BEGIN');
        try {
            await work(c);
            await c.query('COMMIT');
        }
        catch (error) {
            await c.query('ROLLBACK');
            throw error;
        }
    }
    finally {
        c.release();
    }
}
/** apps/lifecycle-store/src/main.ts in its own process, on the real NATS and PostgreSQL, under a bench-only schema prefix. */
function startService(prefix) {
    const child = (0, node_child_process_1.spawn)(process.execPath, ['-r', node_path_1.default.join(repoRoot, 'tools/register.cjs'), node_path_1.default.join(repoRoot, 'apps/lifecycle-store/src/main.ts')], {
        cwd: repoRoot,
        env: {
            ...process.env,
            NATS_URL,
            DATABASE_URL,
            DATABASE_SCHEMA_PREFIX: prefix,
            HTTP_HOST: '127.0.0.1',
            HTTP_PORT: '0',
            LOG_LEVEL: 'warn',
            LIFECYCLE_CASCADE_PARTICIPANTS: '',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
    });
    process.on('exit', () => child.kill('SIGTERM'));
    return child;
}
async function waitForService(bus) {
    const deadline = Date.now() + 60_000;
    for (;;) {
        try {
            const described = await bus.request(contracts_1.LifecycleStoreDescribe, {}, { timeoutMs: 1000 });
            if (described.stores.every((s) => s.ready))
                return;
        }
        catch (error) {
            if (Date.now() > deadline)
                throw error;
        }
        await new Promise((r) => setTimeout(r, 200));
    }
}
async function stopService(child) {
    if (child.exitCode !== null)
        return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
}
async function dropSchema(schema) {
    const client = new pg_1.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
    finally {
        await client.end();
    }
}
(0, harness_1.runBench)('bench:lifecycle', main);
//# sourceMappingURL=lifecycle.bench.js.map