import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import {
  ExportAuditExport,
  LifecycleGetSessionStanding,
  LifecycleGetWidgetStanding,
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryVerifyBindingRevision,
  SealedResolve,
  type RunToolBatchResponse,
} from '@apphost/contracts';
import { descriptors, TEST_DATABASE_URL } from '@apphost/testing';
import { fixtureSpec, profile, token } from '../plane/catalog-harness';
import { benchHttp, edgeFields, edgeFloor } from './bench-http';
import { benchModes, startBenchPlane, type BenchMode } from './bench-plane';
import { startBusHop } from './bus-hop';
import { profiled } from './cpu-profile';
import { measured, measuredRound, medianRound, positiveIntEnv, round3, runBench, runLoad, stopAll, type Measured, type Round, WARMUP } from './harness';
import { medianMeasured, ROUNDS } from './rounds';
import { startCommitFloor } from './commit-floor';
import { compositeFloor, floorHops, floorPart, floorRepeated, requiredFloorFields, startRedisFloor, tokenCheck, warmFloorParts } from './required-floor';
import { mergeStages, startStageTrace, type Stage } from './stage-trace';

/**
 * The export benchmark (`npm run bench:export`), in each `BENCH_MODE` (`plane`: `npm start`, every service in this
 * process on the in-process bus; `services`: `npm run start:services`, seven processes over a private NATS server;
 * both by default): `POST /v1/exports` through the gateway (authorize, permit, ledger
 * check, sealed resolve, authorized row, recheck, released row) against the raw work it cannot avoid, in the same
 * run: a sealed-record resolve over the bus plus the same two committed audit writes by hand (INSERT authorized,
 * UPDATE released) in export-audit's own table. 1 and 16 in flight, BENCH_ROUNDS rounds of raw, the composite floor,
 * then export (each round shares the machine's load of its moment; the ratio is the median of the paired ratios, the
 * composite its median round); JSON lines on stdout,
 * progress on stderr. Target: export ≥ 0.5× raw throughput at 16 in flight. A `stage_trace` line per level gives, per bus
 * subject and service, how many requests an export makes and their mean time (over the export rounds only: the raw
 * rounds' resolves are not counted). Last, a `breakdown` line: at 16 in flight, the CPU of this process per call of each
 * request an export makes, alone (the same requests export-audit sends, from a bench client), and of the export over the
 * bus without the gateway and HTTP: where an export's CPU goes, part by part.
 *
 * Run: node -r ./tools/register.cjs tools/bench/export.bench.ts
 */
const TOTAL = positiveIntEnv('BENCH_TOTAL', 200);
/** Calls per part of the breakdown (0: no breakdown). */
const BREAKDOWN_TOTAL = Number(process.env.BENCH_BREAKDOWN_TOTAL ?? 400);
const TARGET_AT_16 = 0.5;
/**
 * The least serial bus hops of an export besides the sealed resolve (which the raw baseline makes): the gateway hands
 * it over; the ledger check in lifecycle-store beside the binding key's in binding-registry; the recheck before
 * release, the same two beside each other again.
 */
const HOPS = ['gateway → export-audit', 'lifecycle-store (session, event) beside binding-registry (binding key)', 'the recheck: the same two again'];
/**
 * The fresh reads an export makes, each one primary-key statement at least: the ledger (session, incarnation and
 * event: one statement) beside the binding key, at the check and again at the recheck before release (2 serial).
 */
const FRESH_READS = { count: 4, serial: 2 };
/**
 * The permit's writes to the coordination store: its acquire (`SET … NX`, the revocation marker read with it), beside
 * the ledger read, and its take at release (1 serial).
 */
const PERMIT_WRITES = { count: 2, serial: 1 };

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

async function main(): Promise<void> {
  for (const mode of benchModes()) await runMode(mode);
}

async function runMode(mode: BenchMode): Promise<void> {
  const plane = await startBenchPlane(mode, { CATALOG_APP_TOOLSETS: JSON.stringify({ bench: [{ toolsetId: 'nonce' }] }), EXPORT_PURGE_INTERVAL_MS: '0' });
  const pool = new Pool({ connectionString: process.env.DATABASE_URL ?? TEST_DATABASE_URL, max: 16 });
  const hop = await startBusHop(plane);
  const freshRead = await startCommitFloor([{ name: 'ledger', bytes: 256 }]);
  const permit = await startRedisFloor(128);
  try {
    const policy = { projections: ['content', 'structured', 'full'] as const, maxBytes: 64 * 1024, perPrincipalPerMinute: 10_000, bulkCap: 100_000 };
    await plane.client.request(RegistryPutProfile, {
      profileId: 'p1',
      profile: { ...profile(), export: { ...policy, projections: [...policy.projections] } },
    });
    await plane.client.request(RegistryPutToolset, { toolsetId: 'nonce', spec: fixtureSpec('stateful-nonce', 'p1') }, { timeoutMs: 30_000 });
    const bearer = await token('bench', 'runtime export');
    const http = benchHttp(plane);
    const created = await http('POST', '/v1/sessions', { bearer, origin: null, body: { appName: 'bench', sessionId: 'bench-1' } });
    if (created.status !== 201) throw new Error(`session create: ${created.status}`);
    const batch = await http('POST', '/v1/sessions/bench-1/tool-batches', {
      bearer,
      origin: null,
      body: { appName: 'bench', invocationId: 'inv-bench', calls: [{ tool: 'start-session', arguments: {} }] },
    });
    if (batch.status !== 200) throw new Error(`batch: ${batch.status}`);
    const ev = batch.body as RunToolBatchResponse;
    const [d] = descriptors(ev);
    const key = {
      session: { tenant: 'acme', appName: 'bench', userId: 'bench', sessionId: 'bench-1' },
      incarnation: ev.incarnation,
      eventId: String(ev.eventId),
      functionCallId: d.correlation.functionCallId,
      recordId: d.sealedResultRef!.recordId,
    };
    const bus = plane.client;
    const table = `"${plane.schemaPrefix}export_audit".export_attempts`;

    let n = 0;
    const viaGateway = async () => {
      const res = await http('POST', '/v1/exports', {
        bearer,
        origin: null,
        body: { appName: 'bench', sessionId: 'bench-1', eventId: ev.eventId, functionCallId: key.functionCallId, operationId: `op-${n++}`, projection: 'full' },
      });
      if (res.status !== 200) throw new Error(`export: ${res.status} ${res.text}`);
    };
    const raw = async () => {
      await bus.request(SealedResolve, { key });
      const operationId = `raw-${n++}`;
      await pool.query(
        `INSERT INTO ${table} (tenant, operation_id, export_id, app_name, user_id, session_id, incarnation, event_id, function_call_id, record_id, toolset_id,
                               purpose, projection, principal_digest, decision, status, byte_count, retain_until)
         VALUES ('acme', $1, $2, 'bench', 'bench', 'bench-raw', $3, $4, $5, $6, 'nonce', 'export', 'full', $7, 'allow', 'authorized', 100, now() + interval '90 days')`,
        [operationId, randomUUID(), ev.incarnation, ev.eventId, key.functionCallId, key.recordId, '0'.repeat(64)],
      );
      await pool.query(
        `UPDATE ${table} SET status = 'released', release_count = release_count + 1, released_at = now(), updated_at = now() WHERE tenant = 'acme' AND operation_id = $1`,
        [operationId],
      );
    };
    await runLoad(viaGateway, WARMUP, 1);
    const edgeOp = edgeFloor(http);
    const tokenOp = tokenCheck(bearer);
    // The required work as one export (`compositeFloor`): the request through the edge and its token check; the hand-over
    // to export-audit; the ledger and the binding read beside the permit's acquire (one hop); the raw work (the resolve,
    // the two committed audit writes); the recheck's two reads (one hop); the permit's take.
    const least = compositeFloor([
      edgeOp,
      tokenOp,
      hop.op,
      [hop.op, freshRead.lookup, freshRead.lookup, permit.write],
      raw,
      [hop.op, freshRead.lookup, freshRead.lookup],
      permit.write,
    ]);
    await warmFloorParts(edgeOp, tokenOp, raw, freshRead.lookup, permit.write, hop.op, least);
    for (const inflight of [1, 16]) {
      const raws: Round[] = [];
      const composites: Measured[] = [];
      const exports: Round[] = [];
      const traces: Stage[][] = [];
      for (let round = 0; round < ROUNDS; round++) {
        raws.push(await measuredRound(raw, TOTAL, inflight));
        composites.push(await measured(least, TOTAL, inflight));
        const tracing = await startStageTrace(plane.sources);
        exports.push(await profiled(`export-${mode}-${inflight}-round-${round + 1}`, () => measuredRound(viaGateway, TOTAL, inflight)));
        traces.push(await tracing.trace(TOTAL));
        const [r, e] = [raws[round], exports[round]];
        process.stderr.write(
          `${mode} inflight ${inflight} round ${round + 1}: raw ${r.ops_s.toFixed(1)} ops/s p50 ${r.p50_ms.toFixed(2)} ms, ` +
            `export ${e.ops_s.toFixed(1)} ops/s p50 ${e.p50_ms.toFixed(2)} ms (cpu ${e.nodeCpuMsPerOp.toFixed(2)} ms/op, loop ${e.eventLoopUtil.toFixed(2)}), ` +
            `ratio ${(e.ops_s / r.ops_s).toFixed(3)}\n`,
        );
      }
      const edgeRun = await measured(edgeOp, TOTAL, inflight);
      const edge = edgeRun.latency;
      const ratios = exports.map((e, i) => e.ops_s / raws[i].ops_s);
      const ratio = median(ratios);
      const [baseline, exported] = [medianRound(raws), medianRound(exports)];
      // What an export cannot skip beside the raw work: the request through the gateway's edge, its token check, the
      // fresh reads of the check and the recheck, the permit, and the hops between the services that own what it checks.
      const required = [
        floorPart('edge', edgeRun),
        floorPart('token', await measured(tokenOp, TOTAL, inflight)),
        floorPart('raw', { latency: baseline, cpuMsPerOp: baseline.nodeCpuMsPerOp, eventLoopUtil: baseline.eventLoopUtil }, 0),
        floorRepeated('reads', FRESH_READS.count, await measured(freshRead.lookup, TOTAL, inflight), FRESH_READS.serial),
        floorRepeated('permit', PERMIT_WRITES.count, await measured(permit.write, TOTAL, inflight), PERMIT_WRITES.serial),
        floorHops(HOPS, await measured(hop.op, TOTAL, inflight)),
      ];
      const composite = medianMeasured(composites);
      console.log(
        JSON.stringify({
          bench: 'export',
          mode,
          inflight,
          total: TOTAL,
          rounds: ROUNDS,
          raw_p50_ms: round3(baseline.p50_ms),
          raw_p99_ms: round3(baseline.p99_ms),
          export_p50_ms: round3(exported.p50_ms),
          export_p99_ms: round3(exported.p99_ms),
          raw_ops_s: round3(baseline.ops_s),
          export_ops_s: round3(exported.ops_s),
          raw_node_cpu_ms_per_op: round3(baseline.nodeCpuMsPerOp),
          export_node_cpu_ms_per_op: round3(exported.nodeCpuMsPerOp),
          export_event_loop_util: round3(exported.eventLoopUtil),
          ...edgeFields(edge),
          ...requiredFloorFields(mode, required, composite, baseline, inflight === 16 ? { ratio: TARGET_AT_16 } : null),
          throughput_ratio: round3(ratio),
          round_ratios: ratios.map(round3),
          ...(inflight === 16 ? { target: TARGET_AT_16, meets_target: ratio >= TARGET_AT_16 } : {}),
        }),
      );
      console.log(JSON.stringify({ bench: 'export', mode, inflight, stage_trace: mergeStages(traces) }));
    }
    if (BREAKDOWN_TOTAL > 0) {
      const session = key.session;
      const bindingRevision = d.bindingRevision;
      const principal = { tenant: 'acme', subject: 'bench', scopes: ['runtime', 'export'] };
      const standing = { session, principal: { tenant: principal.tenant, subject: principal.subject } };
      const parts: Record<string, () => Promise<unknown>> = {
        'lifecycle-store.get-widget-standing': () =>
          bus.request(LifecycleGetWidgetStanding, { ...standing, eventId: ev.eventId, functionCallId: key.functionCallId }),
        'lifecycle-store.get-session-standing': () => bus.request(LifecycleGetSessionStanding, standing),
        'binding-registry.get-toolset': () => bus.request(RegistryGetToolset, { toolsetId: 'nonce' }),
        'binding-registry.verify-binding-revision': () => bus.request(RegistryVerifyBindingRevision, { toolsetId: 'nonce', bindingRevision }),
        'sealed-result-store.resolve': () => bus.request(SealedResolve, { key }),
        'export-audit.export (bus, no gateway)': () =>
          bus.request(
            ExportAuditExport,
            { principal, session, eventId: ev.eventId, functionCallId: key.functionCallId, operationId: `bus-${n++}`, projection: 'full' },
            { timeoutMs: 30_000 },
          ),
        'POST /v1/exports': viaGateway,
      };
      const breakdown: Record<string, { node_cpu_ms_per_op: number; ops_s: number }> = {};
      for (const [name, call] of Object.entries(parts)) {
        await runLoad(call, WARMUP, 16);
        const m = await measured(call, BREAKDOWN_TOTAL, 16);
        breakdown[name] = { node_cpu_ms_per_op: round3(m.cpuMsPerOp), ops_s: round3(m.latency.ops_s) };
      }
      console.log(JSON.stringify({ bench: 'export', mode, inflight: 16, breakdown }));
    }
  } finally {
    await stopAll(() => pool.end(), hop.stop, freshRead.stop, permit.stop, plane.stop);
  }
}

runBench('bench:export', main);
