import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import {
  byteReferenceSchema,
  RegistryAcquireGeneration,
  RegistryPutProfile,
  RegistryPutToolset,
  VIEW_DOCUMENT_REFERENCE_FROM_BYTES,
  type HostProfile,
} from '@apphost/contracts';
import { readUnderPolicy } from '@apphost/mcp';
import { publishedBasicVanillaJs, publishedPdf, type PublishedServer } from '@apphost/testing';
import { token } from '../plane/catalog-harness';
import { sessionWithUiCall, VIEW_ORIGIN, viewProfile } from '../plane/views-harness';
import { benchHttp, edgeFields, edgeFloor } from './bench-http';
import { profiled } from './cpu-profile';
import { benchModes, startBenchPlane, type BenchMode } from './bench-plane';
import { measured, positiveIntEnv, round3, runBench, runLoad, stopAll, type Measurement, WARMUP } from './harness';
import { startStageTrace } from './stage-trace';

/**
 * The View bootstrap benchmark (`npm run bench:view-bootstrap`): `POST /v1/views` through the gateway (caller,
 * principal, session and widget checks, toolset and profile, a reference on the producing generation, the sealed
 * resolve, one policed `resources/read` asked of the registry owner, document selection, CSP,
 * grant) against a direct v2 SDK `resources/read` of the same resource on another process of the same stdio server,
 * at 1 and 16 in flight, for the ~218 KB basic-vanillajs View and the ~4.3 MB PDF View. The floor the design imposes
 * is measured too: the one policed read over the bus (`readUnderPolicy`: the owner's `read-resource` on the producing generation)
 * and, for a document held by reference, its one fetch from the owner, which no bootstrap can skip. JSON lines on stdout; progress on stderr. Views opened in a
 * round are closed after it (untimed). It runs on the plane as `npm start` runs it and as `npm run start:services`
 * runs it (`BENCH_MODE`), with a bus stage trace per level.
 *
 * Run: node -r ./tools/register.cjs tools/bench/view-bootstrap.bench.ts
 */
const TOTAL_SMALL = positiveIntEnv('BENCH_TOTAL_SMALL', 100);
const TOTAL_LARGE = positiveIntEnv('BENCH_TOTAL_LARGE', 16);
/** `BENCH_DOCUMENTS=basic-vanillajs` (or `pdf`): only those documents (default: both). */
const DOCUMENTS = process.env['BENCH_DOCUMENTS'] ? process.env['BENCH_DOCUMENTS'].split(',') : null;
const MIB = 1024 * 1024;
/** The Views issue's target, for the small View at 1 in flight. */
const TARGET_ADDED_P50_MS = 10;

interface Document {
  name: 'basic-vanillajs' | 'pdf';
  appName: string;
  server: PublishedServer;
  total: number;
  warmup: number;
}

async function runMode(mode: BenchMode): Promise<void> {
  // Sixteen 4.3 MB reads queue on one stdio connection: give them more than the test profile's 20 s.
  const plane = await startBenchPlane(mode, {
    CATALOG_APP_TOOLSETS: JSON.stringify({ vanilla: [{ toolsetId: 'vanilla' }], pdf: [{ toolsetId: 'pdf' }] }),
    AUTH_ORIGIN_ALLOWLIST: VIEW_ORIGIN,
    GOVERNED_VIEW_READ_TIMEOUT_MS: '120000',
  });
  const clients: Client[] = [];
  try {
    const http = benchHttp(plane);
    const bearer = await token('bench', 'runtime view');
    const base = viewProfile();
    const benchProfile: HostProfile = { ...base, limits: { ...base.limits, readTimeoutMs: 120_000 } };
    await plane.client.request(RegistryPutProfile, { profileId: 'p1', profile: benchProfile });
    const documents = (
      [
        { name: 'basic-vanillajs', appName: 'vanilla', server: publishedBasicVanillaJs(), total: TOTAL_SMALL, warmup: WARMUP },
        { name: 'pdf', appName: 'pdf', server: publishedPdf(), total: TOTAL_LARGE, warmup: Math.min(WARMUP, TOTAL_LARGE) },
      ] as Document[]
    ).filter((doc) => DOCUMENTS === null || DOCUMENTS.includes(doc.name));
    for (const doc of documents) {
      const spec = { connection: doc.server.connection, profileId: 'p1' };
      const state = (await plane.client.request(RegistryPutToolset, { toolsetId: doc.appName, spec }, { timeoutMs: 60_000 })).status.state;
      if (state !== 'PROFILE_BOUND') throw new Error(`toolset ${doc.appName} is ${state}`);
    }

    for (const doc of documents) {
      const sessionId = `bench-${doc.appName}`;
      const ev = await sessionWithUiCall(http, bearer, {
        appName: doc.appName,
        sessionId,
        tool: doc.server.uiTool.name,
        arguments: doc.server.uiTool.arguments,
      });
      const body = { appName: doc.appName, sessionId, eventId: ev.eventId, functionCallId: 'call-1' };
      const opened: string[] = [];
      let bytes = 0;
      const viaGateway = async () => {
        const res = await http('POST', '/v1/views', { bearer, body });
        if (res.status !== 201) throw new Error(`open view: ${res.status} ${res.text.slice(0, 300)}`);
        if (typeof res.body.document.html !== 'string') throw new Error('open view: the answer holds no document');
        bytes ||= Buffer.byteLength(res.body.document.html); // counted once: the harness's work is not the bootstrap's
        opened.push(res.body.viewId as string);
      };
      const closeOpened = async () => {
        for (const viewId of opened.splice(0)) await http('DELETE', `/v1/views/${viewId}`, { bearer });
      };

      const direct = new Client({ name: 'bench-direct', version: '1' }, {});
      clients.push(direct);
      const { command, args, cwd } = doc.server.connection;
      await direct.connect(new StdioClientTransport({ command, args, cwd, env: getDefaultEnvironment(), stderr: 'ignore' }));
      const directRead = () => direct.readResource({ uri: doc.server.resourceUri });

      // The floor: the one policed read on the session's app-safe generation (the one the widget's call ran on).
      const handle = await plane.client.request(
        RegistryAcquireGeneration,
        {
          toolsetId: doc.appName,
          connectionClass: 'app-safe',
          principal: { tenant: 'acme', subject: 'bench', scopes: ['runtime', 'view'] },
          session: { key: { tenant: 'acme', appName: doc.appName, userId: 'bench', sessionId }, incarnation: ev.incarnation },
          holder: { kind: 'view', id: `bench-floor-${doc.appName}` },
        },
        { timeoutMs: 30_000 },
      );
      const generation = {
        generationId: handle.generationId,
        fence: handle.fence,
        ownerInstanceId: handle.ownerInstanceId,
        toolsetId: handle.toolsetId,
        bindingGeneration: handle.bindingGeneration,
        connectionClass: handle.connectionClass,
      };
      // As a bootstrap reads it: a document of VIEW_DOCUMENT_REFERENCE_FROM_BYTES or more stays with the owner and
      // is fetched from it once, by whoever renders it (the gateway).
      const floorRead = async () => {
        const read = await readUnderPolicy(
          plane.client,
          generation,
          {
            uri: doc.server.resourceUri,
            policy: { prefixes: [doc.server.resourceUri] },
            textReferenceFromBytes: VIEW_DOCUMENT_REFERENCE_FROM_BYTES,
            limits: { maxItemBytes: 8 * MIB, maxTotalBytes: 8 * MIB },
          },
          { timeoutMs: 60_000 },
        );
        const reference = read.contents[0]?.['textLiteralReference'];
        if (reference) await plane.client.fetchReference(byteReferenceSchema.parse(reference), { timeoutMs: 60_000 });
      };

      await runLoad(directRead, doc.warmup, 1);
      await runLoad(floorRead, doc.warmup, 1);
      await runLoad(viaGateway, doc.warmup, 1);
      await closeOpened();
      const edgeOp = edgeFloor(http);
      await runLoad(edgeOp, doc.warmup, 1);
      for (const inflight of [1, 16]) {
        const raw = await runLoad(directRead, doc.total, inflight);
        const edge = await runLoad(edgeOp, doc.total, inflight);
        const { latency: floor, cpuMsPerOp: floorCpu } = await measured(floorRead, doc.total, inflight);
        const tracing = await startStageTrace(plane.sources);
        const viewRun = await profiled(`view-bootstrap-${mode}-${doc.name}-${inflight}`, () => measured(viaGateway, doc.total, inflight));
        const view = viewRun.latency;
        const stages = await tracing.trace(doc.total);
        await closeOpened();
        process.stderr.write(
          `${mode} ${doc.name} inflight ${inflight}: direct p50 ${raw.p50_ms.toFixed(2)} ms, floor ${floor.p50_ms.toFixed(2)} ms, view ${view.p50_ms.toFixed(2)} ms\n`,
        );
        console.log(
          JSON.stringify({
            ...line(mode, doc, bytes, inflight, raw, floor, view),
            ...edgeFields(edge),
            floor_node_cpu_ms_per_op: round3(floorCpu),
            view_node_cpu_ms_per_op: round3(viewRun.cpuMsPerOp),
            view_event_loop_util: round3(viewRun.eventLoopUtil),
          }),
        );
        console.log(JSON.stringify({ bench: 'view-bootstrap', mode, document: doc.name, inflight, stage_trace: stages }));
      }
    }
  } finally {
    await stopAll(...clients.map((client) => () => client.close()), plane.stop);
  }
}

async function main(): Promise<void> {
  for (const mode of benchModes()) await runMode(mode);
}

function line(
  mode: BenchMode,
  doc: Document,
  bytes: number,
  inflight: number,
  raw: Measurement,
  floor: Measurement,
  view: Measurement,
): Record<string, unknown> {
  return {
    bench: 'view-bootstrap',
    mode,
    document: doc.name,
    bytes,
    inflight,
    total: doc.total,
    direct_p50_ms: round3(raw.p50_ms),
    direct_p99_ms: round3(raw.p99_ms),
    floor_p50_ms: round3(floor.p50_ms),
    floor_p99_ms: round3(floor.p99_ms),
    view_p50_ms: round3(view.p50_ms),
    view_p99_ms: round3(view.p99_ms),
    added_p50_ms: round3(view.p50_ms - raw.p50_ms),
    above_floor_p50_ms: round3(view.p50_ms - floor.p50_ms),
    direct_ops_s: round3(raw.ops_s),
    floor_ops_s: round3(floor.ops_s),
    view_ops_s: round3(view.ops_s),
    throughput_ratio: round3(view.ops_s / raw.ops_s),
    floor_ratio: round3(floor.ops_s / raw.ops_s),
    view_vs_floor_ratio: round3(view.ops_s / floor.ops_s),
    ...(doc.name === 'basic-vanillajs' && inflight === 1
      ? { target_added_p50_ms: TARGET_ADDED_P50_MS, meets_target: view.p50_ms - raw.p50_ms <= TARGET_ADDED_P50_MS }
      : {}),
  };
}

runBench('bench:view-bootstrap', main);
