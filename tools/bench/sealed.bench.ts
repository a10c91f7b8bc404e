import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client, Pool } from 'pg';
import pino from 'pino';
import { BusClient, BusServer, NatsTransport } from '@apphost/bus';
import { canonicalize } from '@apphost/canonical-json';
import {
  defineContract,
  SealedCreate,
  SealedResolve,
  SealedResultStoreDescribe,
  type SealedCreateScope,
  type SealedEnvelope,
  type SealedRecordKey,
  type SessionKey,
} from '@apphost/contracts';
import { z } from 'zod';
import path from 'node:path';
import { startService, type ServiceDefinition } from '@apphost/runtime';
import { profiled } from './cpu-profile';
import { measuredRound, medianRound, positiveIntEnv, round3, runBench, runLoad, type Round } from './harness';

/**
 * `npm run bench:sealed`: the sealed-result store through the typed bus (create + resolve, in-process service on
 * NATS, against PostgreSQL) vs raw `pg` insert + select of the same canonical bytes, in the same run; plus the
 * store's digest verification cost per MiB. See tools/bench/README.md.
 */
const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const ROUNDS = positiveIntEnv('BENCH_ROUNDS', 3);
/** The store's pool size (TypeORM/pg default); the raw side gets the same. */
const POOL_SIZE = 10;
const SESSIONS = 256;
/** `BENCH_SERVICE=process`: the store in its own process (as deployed); default in-process. */
const OWN_PROCESS = process.env['BENCH_SERVICE'] === 'process';
/** Each line says where the store ran: `process` (as deployed) or `in-process` (beside the load generator). */
const MODE = OWN_PROCESS ? 'process' : 'in-process';
const ALL_CASES = [
  { sizeKib: 4, inflight: 1, total: positiveIntEnv('BENCH_TOTAL_4K_1', 1000) },
  { sizeKib: 4, inflight: 16, total: positiveIntEnv('BENCH_TOTAL_4K_16', 4000), target: 0.5 },
  { sizeKib: 512, inflight: 1, total: positiveIntEnv('BENCH_TOTAL_512K_1', 100) },
  { sizeKib: 512, inflight: 16, total: positiveIntEnv('BENCH_TOTAL_512K_16', 300) },
];
/** `BENCH_CASES=4:16,512:1` runs a subset (size KiB:in flight); all four by default. */
const CASE_FILTER = process.env['BENCH_CASES']?.split(',');
const CASES = CASE_FILTER ? ALL_CASES.filter((c) => CASE_FILTER.includes(`${c.sizeKib}:${c.inflight}`)) : ALL_CASES;
/**
 * `raw-pg` is the baseline the target is measured against: the same durable writes the store's semantics need for
 * create + resolve-with-event (insert, then bind-to-event + read: two fsync'd commits). `raw-pg-1commit` is the
 * literal "insert + select" (one commit), reported for reference (`ratio_ops_1commit`).
 */
const ALL_VARIANTS = ['raw-pg', 'raw-pg-1commit', 'raw-pg-over-bus', 'store-no-bus', 'typed-bus'] as const;
/**
 * `raw-pg-over-bus` is the **required floor** (decision 0019): raw-pg's own statements, each behind one typed bus hop
 * on the same NATS carrying the same bytes the way the store's do (the envelope in the create's request, in the
 * resolve's reply), zod on both sides with schemas that check nothing but shape. It is what the design cannot skip —
 * the store owns the records and is asked over the bus — with none of the store's own work (envelope schema,
 * canonical form, digests, scope and incarnation checks). Measured where the store runs in this process (`in-process`).
 *
 * `store-no-bus` (a diagnostic, also `in-process` only): the store's own create and resolve (`SealedResultService`)
 * called in this process with no bus in between — its statements and its domain work alone. With `raw-pg-over-bus` it
 * splits the gap to raw-pg in two: what the store's work costs (`store_no_bus_ratio`) and what the bus costs (the ceiling).
 */
const IN_PROCESS_ONLY: readonly Variant[] = ['raw-pg-over-bus', 'store-no-bus'];
const VARIANTS = ALL_VARIANTS.filter((v) => !OWN_PROCESS || !IN_PROCESS_ONLY.includes(v));

// Apps never import each other and tools compose them at run time, by path (as tools/plane does).
const app = path.resolve(__dirname, '..', '..', 'apps', 'sealed-result-store', 'src');
const { sealedResultStoreService } = require(path.join(app, 'service.ts')) as { sealedResultStoreService: ServiceDefinition };
const { sealedDigest } = require(path.join(app, 'sealed', 'sealed-digest.ts')) as { sealedDigest: (bytes: Buffer) => Buffer };
/** The store's domain service: what its bus handlers call (`sealed-result.handlers.ts`). */
interface StoreService {
  repository: object;
  create(request: { scope: SealedCreateScope; operationInstanceId: string; envelope: SealedEnvelope }): Promise<{ ref: { recordId: string } }>;
  resolve(key: SealedRecordKey, expected: undefined): Promise<{ transfer: string }>;
}
const { SealedResultService } = require(path.join(app, 'sealed', 'sealed-result.service.ts')) as {
  SealedResultService: new (...args: never[]) => StoreService;
};
type Variant = (typeof ALL_VARIANTS)[number];

function envelopeOf(bytes: number, functionCallId: string): SealedEnvelope {
  const rows: string[] = [];
  const base: SealedEnvelope = {
    result: { content: [{ type: 'text', text: 'dashboard ready' }], structuredContent: { rows } },
    refresh: {
      serverId: 'srv-bench',
      toolsetId: 'ts-bench',
      nativeToolName: 'show_agent_dashboard',
      arguments: { kind: 'inline', value: { days: 7 } },
      catalogGeneration: 'cat-1',
      bindingRevision: 'k1:v1:bench',
      replayClassification: { source: 'profile:bench', revision: 'r1' },
      initiatingOrigin: 'model',
      correlation: { invocationId: 'inv-bench', functionCallId },
    },
  };
  // Fill to exactly `bytes` canonical bytes with 1 KiB rows and one remainder row.
  const overhead = Buffer.byteLength(canonicalize(base));
  let left = bytes - overhead;
  for (let i = 0; left > 0; i++) {
    const len = Math.min(1024, left - (rows.length ? 3 : 2)); // quotes (+ comma)
    if (len < 1) break;
    rows.push(''.padEnd(len, String.fromCharCode(97 + (i % 26))));
    left -= len + (rows.length > 1 ? 3 : 2);
  }
  return base;
}

async function main(): Promise<void> {
  const prefix = `t_${randomBytes(5).toString('hex')}_`;
  const rawSchema = `${prefix}raw_bench`;
  const transport = await NatsTransport.connect({ servers: NATS_URL, name: `bench-sealed-${prefix}` });
  const service = OWN_PROCESS ? await startServiceProcess(prefix, transport) : await startInProcess(prefix, transport);
  const admin = new Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${rawSchema}"`);
  // The store keeps bodies uncompressed and out of line (STORAGE EXTERNAL, for chunk slicing); the raw table stores
  // the same bytes the same way, so both write the same body bytes to WAL and heap.
  await admin.query(`CREATE TABLE "${rawSchema}".sealed (op_id text PRIMARY KEY, event_id text, digest bytea NOT NULL, body bytea NOT NULL)`);
  await admin.query(`ALTER TABLE "${rawSchema}".sealed ALTER COLUMN body SET STORAGE EXTERNAL`);
  const sync = await admin.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
  if (sync.rows[0].synchronous_commit !== 'on') throw new Error('bench:sealed compares fsync-durable commits: synchronous_commit must be on');
  // Same pool size on both sides: read the store's own pool (TypeORM's pg pool) rather than assume its default.
  const storePoolSize = service.poolSize ?? POOL_SIZE;
  if (storePoolSize !== POOL_SIZE) throw new Error(`the store's pool has ${storePoolSize} connections; the raw pool has ${POOL_SIZE}`);
  const pool = new Pool({ connectionString: DATABASE_URL, max: POOL_SIZE });
  const client = new BusClient({ transport, defaultTimeoutMs: 30_000 });
  const floorContract = defineContract({
    service: 'sealed-result-store',
    operation: `bench-floor-${prefix.slice(2, -1)}`,
    version: 1,
    request: z.strictObject({ id: z.string(), body: z.string().optional(), eventId: z.string().optional() }),
    response: z.strictObject({ body: z.string().nullable() }),
    errors: [],
  });
  /** The floor's handlers: raw-pg's statements for the case being run (set by `callsFor`). */
  const floorHandlers: { insert(id: string, body: string): Promise<unknown>; bind(id: string, eventId: string): Promise<string> } = {
    insert: () => Promise.reject(new Error('no case')),
    bind: () => Promise.reject(new Error('no case')),
  };
  const floorServer = new BusServer({
    transport,
    instanceId: `bench-floor-${prefix}`,
    queueGroup: `bench-floor-${prefix.slice(0, -1)}`,
    logger: { error: (o, msg) => console.error(msg, o), warn: (o, msg) => console.error(msg, o) },
  });
  floorServer.register(floorContract, async (req) => {
    if (req.body !== undefined) {
      await floorHandlers.insert(req.id, req.body);
      return { body: null };
    }
    return { body: await floorHandlers.bind(req.id, req.eventId ?? '') };
  });
  floorServer.start();
  await floorServer.ready();
  try {
    const sessions: SessionKey[] = Array.from({ length: SESSIONS }, (_, i) => ({
      tenant: 'bench',
      appName: 'dash',
      userId: `u${i % 16}`,
      sessionId: `s${i}-${prefix}`,
    }));
    let seq = 0;
    const callsFor = (sizeKib: number): Record<Variant, () => Promise<unknown>> => {
      const envelope = envelopeOf(sizeKib * 1024, 'fc-bench');
      const body = Buffer.from(canonicalize(envelope), 'utf8');
      if (body.length !== sizeKib * 1024) throw new Error(`bench envelope is ${body.length} bytes, wanted ${sizeKib * 1024}`);
      const digest = sealedDigest(body);
      const text = body.toString('utf8');
      const rawInsert = (id: string, bytes: Buffer) =>
        pool.query(`INSERT INTO "${rawSchema}".sealed (op_id, digest, body) VALUES ($1, $2, $3)`, [id, digest, bytes]);
      const rawBind = async (id: string, eventId: string): Promise<Buffer> => {
        const { rows } = await pool.query(
          `UPDATE "${rawSchema}".sealed SET event_id = $2 WHERE op_id = $1 AND (event_id IS NULL OR event_id = $2) RETURNING digest, body`,
          [id, eventId],
        );
        if (!sealedDigest(rows[0].body).equals(rows[0].digest)) throw new Error('raw bind returned other bytes');
        return rows[0].body as Buffer;
      };
      floorHandlers.insert = (id, bytes) => rawInsert(id, Buffer.from(bytes, 'utf8'));
      floorHandlers.bind = async (id, eventId) => (await rawBind(id, eventId)).toString('utf8');
      return {
        'raw-pg': async () => {
          const n = seq++;
          await rawInsert(`op-${n}`, body);
          await rawBind(`op-${n}`, `evt-${n}`);
        },
        'raw-pg-over-bus': async () => {
          const n = seq++;
          await client.request(floorContract, { id: `op-${n}`, body: text });
          const { body: bound } = await client.request(floorContract, { id: `op-${n}`, eventId: `evt-${n}` });
          if (bound?.length !== text.length) throw new Error('the floor bind returned other bytes');
        },
        'raw-pg-1commit': async () => {
          const id = `op-${seq++}`;
          await pool.query(`INSERT INTO "${rawSchema}".sealed (op_id, digest, body) VALUES ($1, $2, $3)`, [id, digest, body]);
          const { rows } = await pool.query(`SELECT body FROM "${rawSchema}".sealed WHERE op_id = $1`, [id]);
          if (rows[0].body.length !== body.length) throw new Error('raw select returned other bytes');
        },
        'store-no-bus': async () => {
          if (!service.store) throw new Error('store-no-bus runs only with the store in this process');
          const n = seq++;
          const scope = { session: sessions[n % SESSIONS], incarnation: 1, functionCallId: 'fc-bench' };
          const created = await service.store.create({ scope, operationInstanceId: `op-${prefix}-${n}`, envelope });
          const resolved = await service.store.resolve({ ...scope, eventId: `evt-${n}`, recordId: created.ref.recordId }, undefined);
          if (resolved.transfer !== 'inline') throw new Error('expected an inline resolve');
        },
        'typed-bus': async () => {
          const n = seq++;
          const scope = { session: sessions[n % SESSIONS], incarnation: 1, functionCallId: 'fc-bench' };
          const created = await client.request(SealedCreate, { scope, operationInstanceId: `op-${prefix}-${n}`, envelope });
          const key = { ...scope, eventId: `evt-${n}`, recordId: created.ref.recordId };
          const resolved = await client.request(SealedResolve, { key });
          if (resolved.transfer !== 'inline') throw new Error('expected an inline resolve');
        },
      };
    };

    const lines: object[] = [];
    for (const c of CASES) {
      const calls = callsFor(c.sizeKib);
      for (const v of VARIANTS) await runLoad(calls[v], Math.max(10, Math.ceil(c.total / 5)), c.inflight); // warm-up
      const rounds = Object.fromEntries(VARIANTS.map((v) => [v, [] as Round[]])) as Record<Variant, Round[]>;
      for (let r = 1; r <= ROUNDS; r++) {
        for (const v of VARIANTS) {
          const m = await profiled(`sealed-${v}-${c.sizeKib}k-${c.inflight}-round-${r}`, () => measuredRound(calls[v], c.total, c.inflight));
          rounds[v].push(m);
          process.stderr.write(
            `round ${r}/${ROUNDS} ${c.sizeKib} KiB inflight=${c.inflight} ${v}: ${Math.round(m.ops_s)} ops/s p99 ${round3(m.p99_ms)} ms` +
              ` node ${round3(m.nodeCpuMsPerOp)} ms/op event loop ${round3(m.eventLoopUtil)}\n`,
          );
        }
      }
      const med = Object.fromEntries(VARIANTS.map((v) => [v, medianRound(rounds[v])])) as Record<Variant, Round>;
      for (const v of VARIANTS) {
        const m = med[v];
        lines.push({
          bench: 'sealed',
          mode: MODE,
          variant: v,
          size_kib: c.sizeKib,
          inflight: c.inflight,
          total: m.total,
          ops_s: Math.round(m.ops_s),
          p50_ms: round3(m.p50_ms),
          p99_ms: round3(m.p99_ms),
          node_cpu_ms_per_op: round3(m.nodeCpuMsPerOp),
          event_loop_util: round3(m.eventLoopUtil),
        });
      }
      const ratio = med['typed-bus'].ops_s / med['raw-pg'].ops_s;
      // The ceiling the required floor puts on the ratio; it prevents the target when it is below it.
      const ceiling = OWN_PROCESS ? null : med['raw-pg-over-bus'].ops_s / med['raw-pg'].ops_s;
      lines.push({
        bench: 'sealed',
        mode: MODE,
        size_kib: c.sizeKib,
        inflight: c.inflight,
        // The floor is raw-pg: the two fsync'd commits (insert, bind) the store's create + resolve requires.
        floor: 'raw-pg',
        ratio_ops: round3(ratio),
        ratio_ops_1commit: round3(med['typed-bus'].ops_s / med['raw-pg-1commit'].ops_s),
        required_floor: OWN_PROCESS ? null : 'raw-pg-over-bus',
        required_floor_ceiling_ratio: ceiling === null ? null : round3(ceiling),
        // The store's statements and domain work without the bus, against the same raw baseline (diagnostic).
        store_no_bus_ratio: OWN_PROCESS ? null : round3(med['store-no-bus'].ops_s / med['raw-pg'].ops_s),
        ...(c.target !== undefined
          ? { target: c.target, meets_target: ratio >= c.target, floor_prevents_target: ceiling === null ? null : ceiling < c.target }
          : {}),
      });
    }
    lines.push(digestLine());
    for (const line of lines) process.stdout.write(`${JSON.stringify(line)}\n`);
  } finally {
    await service.stop().catch(() => undefined);
    await floorServer.stop(1000).catch(() => undefined);
    await transport.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    const { rows } = await admin.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)', [prefix]);
    for (const { nspname } of rows) await admin.query(`DROP SCHEMA "${nspname}" CASCADE`);
    await admin.end();
  }
}

interface StartedStore {
  poolSize?: number;
  /** The store's domain service, when it runs in this process. */
  store?: StoreService;
  stop(): Promise<void>;
}

/** The store started in this process on the bench's transport: the bench's event loop also runs the service. */
async function startInProcess(prefix: string, transport: NatsTransport): Promise<StartedStore> {
  const service = await startService(sealedResultStoreService, {
    env: { DATABASE_URL, DATABASE_SCHEMA_PREFIX: prefix, SEALED_GC_INTERVAL_MS: '0', LOG_LEVEL: 'silent' },
    transport,
    http: false,
    processMetrics: false,
    logger: pino({ level: 'silent' }),
  });
  const store = service.app.get(SealedResultService);
  const db = Reflect.get(store.repository, 'db') as { poolSize: number };
  return { poolSize: db.poolSize, store, stop: () => service.close() };
}

/** apps/sealed-result-store/src/main.ts in its own process (its pool is the persistence default, 10). */
async function startServiceProcess(prefix: string, transport: NatsTransport): Promise<StartedStore> {
  const repoRoot = path.resolve(__dirname, '..', '..');
  const child = spawn(process.execPath, ['-r', path.join(repoRoot, 'tools/register.cjs'), path.join(repoRoot, 'apps/sealed-result-store/src/main.ts')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      NATS_URL,
      DATABASE_URL,
      DATABASE_SCHEMA_PREFIX: prefix,
      SEALED_GC_INTERVAL_MS: '0',
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGTERM'));
  const bus = new BusClient({ transport, defaultTimeoutMs: 1000 });
  for (const deadline = Date.now() + 60_000; ;) {
    const ready = await bus.request(SealedResultStoreDescribe, {}).then(
      (d) => d.stores.every((st) => st.ready),
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('the sealed-result-store process did not become ready');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    poolSize: POOL_SIZE,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    },
  };
}

/** Resolve-time verification: the store-private digest over 8 MiB of canonical bytes, median of 15 runs. */
function digestLine(): object {
  const mib = 8;
  const bytes = randomBytes(mib * 1024 * 1024);
  for (let i = 0; i < 3; i++) sealedDigest(bytes);
  const runs: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    sealedDigest(bytes);
    runs.push((performance.now() - t0) / mib);
  }
  runs.sort((a, b) => a - b);
  return { bench: 'sealed', metric: 'digest-verify', mib, runs: runs.length, ms_per_mib: round3(runs[Math.floor(runs.length / 2)]), target_ms_per_mib: 1 };
}

runBench('bench:sealed', main);
