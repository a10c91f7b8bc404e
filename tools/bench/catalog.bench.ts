import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { BusClient } from '@apphost/bus';
import { CatalogModelCatalog, RegistryPutToolset } from '@apphost/contracts';
import { canonicalizeUri } from '@apphost/policy';
import { bootServices, dropSchemasWithPrefix, REPO_ROOT, startPrivateNats, uniquePrefix, type Stoppable, connectTestTransport } from '@apphost/testing';
import { loadServiceDefinitions } from '../plane/services';
import { positiveIntEnv, round3, runBench } from './harness';

/**
 * `npm run bench:catalog`: (1) model-catalog composition through catalog-policy (fresh: two-class discovery via the
 * registry, pinning, composition) over a 1,000-tool stdio server, and served from the TTL cache; (2) canonicalizeUri
 * calls per second. Both lines carry the raw `tools/list` time of a direct v2 SDK client to another process of the
 * same server, measured in the same run, interleaved. JSON lines on stdout; progress on stderr.
 */
const TOOLS = positiveIntEnv('BENCH_TOOLS', 1000);
const ROUNDS = positiveIntEnv('BENCH_ROUNDS', 15);
const URI_MS = positiveIntEnv('BENCH_URI_MS', 2000);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const timed = async (fn: () => Promise<unknown>) => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};

async function main(): Promise<void> {
  const nats = await startPrivateNats();
  const prefix = uniquePrefix();
  const definitions = loadServiceDefinitions();
  const byName = (name: string) => definitions.find((d) => d.name === name)!;
  let services: Stoppable | undefined;
  const transport = await connectTestTransport('bench-catalog', { natsUrl: nats.url });
  const direct = new Client({ name: 'bench-direct', version: '1' }, {});
  const fixture = {
    command: process.execPath,
    args: [
      '-r',
      path.join(REPO_ROOT, 'tools', 'register.cjs'),
      path.join(REPO_ROOT, 'libs', 'testing', 'src', 'fixtures', 'catalog-matrix.ts'),
      `--count=${TOOLS}`,
    ],
    cwd: REPO_ROOT,
  };
  try {
    services = await bootServices(
      prefix,
      {
        registry: { definition: byName('binding-registry'), env: { REGISTRY_ALLOW_STDIO: 'true', INSTANCE_ID: 'bench-reg', HTTP_PORT: '0' } },
        catalog: { definition: byName('catalog-policy'), env: { CATALOG_MODEL_CACHE_TTL_MS: '600000' } },
      },
      { NATS_URL: nats.url },
    );
    const bus = new BusClient({ transport, defaultTimeoutMs: 60_000 });
    await bus.request(RegistryPutToolset, { toolsetId: 'bench', spec: { connection: { kind: 'stdio', ...fixture }, profileId: null } });
    await direct.connect(new StdioClientTransport({ ...fixture, env: getDefaultEnvironment(), stderr: 'ignore' }));
    const audience = {
      principal: { tenant: 'bench', subject: 'b', scopes: [] },
      session: { key: { tenant: 'bench', appName: 'bench', userId: 'b', sessionId: 's' }, incarnation: 1 },
    };
    const catalog = (fresh: boolean) => bus.request(CatalogModelCatalog, { ...audience, toolsets: [{ toolsetId: 'bench', namePrefix: 'b' }], fresh });
    const rawList = async () => {
      let cursor: string | undefined;
      do cursor = (await direct.listTools(cursor ? { cursor } : undefined)).nextCursor;
      while (cursor);
    };
    // Warm-up: connections, pins (first sight), JIT.
    const warm = await catalog(true);
    for (let i = 0; i < 3; i++) await Promise.all([rawList(), catalog(true)]);
    const raw: number[] = [];
    const fresh: number[] = [];
    const cached: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      raw.push(await timed(rawList));
      fresh.push(await timed(() => catalog(true)));
      cached.push(await timed(() => catalog(false)));
      process.stderr.write(`round ${r + 1}/${ROUNDS}: raw ${raw[r].toFixed(1)} ms, fresh ${fresh[r].toFixed(1)} ms, cached ${cached[r].toFixed(1)} ms\n`);
    }
    const rawP50 = median(raw);
    console.log(
      JSON.stringify({
        bench: 'catalog',
        variant: 'model-catalog',
        tools_listed: TOOLS + 20,
        model_tools: warm.tools.length,
        rounds: ROUNDS,
        raw_tools_list_p50_ms: round3(rawP50),
        fresh_p50_ms: round3(median(fresh)),
        cached_p50_ms: round3(median(cached)),
        fresh_over_raw: round3(median(fresh) / rawP50),
        note: 'fresh = app-safe + full listings via the registry, pinning, composition; raw = one direct listing',
      }),
    );

    const uris = [
      'ui://system-monitor/mcp-app.html',
      'UI://Srv/a/%7Euser/b.html#frag',
      'https://Example.COM:443/a/b?x=1&y=2',
      'http://bücher.example/%41%2f',
      'ui://srv/assets/app.js?v=3',
    ];
    let calls = 0;
    const deadline = performance.now() + URI_MS;
    const t0 = performance.now();
    while (performance.now() < deadline) for (let i = 0; i < 1000; i++) canonicalizeUri(uris[calls++ % uris.length]);
    const seconds = (performance.now() - t0) / 1000;
    raw.push(await timed(rawList));
    console.log(
      JSON.stringify({
        bench: 'catalog',
        variant: 'canonicalize-uri',
        calls,
        calls_s: Math.round(calls / seconds),
        us_per_call: round3((seconds * 1e6) / calls),
        raw_tools_list_p50_ms: round3(median(raw)),
        raw_list_equivalent_calls: Math.round((calls / seconds) * (median(raw) / 1000)),
      }),
    );
  } finally {
    await direct.close().catch(() => undefined);
    await services?.stop().catch(() => undefined);
    await transport.close().catch(() => undefined);
    await nats.stop();
    await dropSchemasWithPrefix(prefix);
  }
}

runBench('bench:catalog', main);
