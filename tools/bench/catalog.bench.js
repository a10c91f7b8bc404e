"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
const node_path_1 = __importDefault(require("node:path"));
const node_perf_hooks_1 = require("node:perf_hooks");
const client_1 = require("@modelcontextprotocol/client");
const stdio_1 = require("@modelcontextprotocol/client/stdio");
const bus_1 = require("@apphost/bus");
const contracts_1 = require("@apphost/contracts");
const policy_1 = require("@apphost/policy");
const testing_1 = require("@apphost/testing");
const services_1 = require("../plane/services");
const harness_1 = require("./harness");
/**
 * `npm run bench:catalog`: (1) model-catalog composition through catalog-policy (fresh: two-class discovery via the
 * registry, pinning, composition) over a 1,000-tool stdio server, and served from the TTL cache; (2) canonicalizeUri
 * calls per second. Both lines carry the raw `tools/list` time of a direct v2 SDK client to another process of the
 * same server, measured in the same run, interleaved. JSON lines on stdout; progress on stderr.
 */
const TOOLS = (0, harness_1.positiveIntEnv)('BENCH_TOOLS', 1000);
const ROUNDS = (0, harness_1.positiveIntEnv)('BENCH_ROUNDS', 15);
const URI_MS = (0, harness_1.positiveIntEnv)('BENCH_URI_MS', 2000);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const timed = async (fn) => {
    const t0 = node_perf_hooks_1.performance.now();
    await fn();
    return node_perf_hooks_1.performance.now() - t0;
};
async function main() {
    const nats = await (0, testing_1.startPrivateNats)();
    const prefix = (0, testing_1.uniquePrefix)();
    const definitions = (0, services_1.loadServiceDefinitions)();
    const byName = (name) => definitions.find((d) => d.name === name);
    let services;
    const transport = await (0, testing_1.connectTestTransport)('bench-catalog', { natsUrl: nats.url });
    const direct = new client_1.Client({ name: 'bench-direct', version: '1' }, {});
    const fixture = {
        command: process.execPath,
        args: [
            '-r',
            node_path_1.default.join(testing_1.REPO_ROOT, 'tools', 'register.cjs'),
            node_path_1.default.join(testing_1.REPO_ROOT, 'libs', 'testing', 'src', 'fixtures', 'catalog-matrix.ts'),
            `--count=${TOOLS}`,
        ],
        cwd: testing_1.REPO_ROOT,
    };
    try {
        services = await (0, testing_1.bootServices)(prefix, {
            registry: { definition: byName('binding-registry'), env: { REGISTRY_ALLOW_STDIO: 'true', INSTANCE_ID: 'bench-reg', HTTP_PORT: '0' } },
            catalog: { definition: byName('catalog-policy'), env: { CATALOG_MODEL_CACHE_TTL_MS: '600000' } },
        }, { NATS_URL: nats.url });
        const bus = new bus_1.BusClient({ transport, defaultTimeoutMs: 60_000 });
        await bus.request(contracts_1.RegistryPutToolset, { toolsetId: 'bench', spec: { connection: { kind: 'stdio', ...fixture }, profileId: null } });
        await direct.connect(new stdio_1.StdioClientTransport({ ...fixture, env: (0, stdio_1.getDefaultEnvironment)(), stderr: 'ignore' }));
        const audience = {
            principal: { tenant: 'bench', subject: 'b', scopes: [] },
            session: { key: { tenant: 'bench', appName: 'bench', userId: 'b', sessionId: 's' }, incarnation: 1 },
        };
        const catalog = (fresh) => bus.request(contracts_1.CatalogModelCatalog, { ...audience, toolsets: [{ toolsetId: 'bench', namePrefix: 'b' }], fresh });
        const rawList = async () => {
            let cursor;
            do
                cursor = (await direct.listTools(cursor ? { cursor } : undefined)).nextCursor;
            while (cursor);
        };
        // Warm-up: connections, pins (first sight), JIT.
        const warm = await catalog(true);
        for (let i = 0; i < 3; i++)
            await Promise.all([rawList(), catalog(true)]);
        const raw = [];
        const fresh = [];
        const cached = [];
        for (let r = 0; r < ROUNDS; r++) {
            raw.push(await timed(rawList));
            fresh.push(await timed(() => catalog(true)));
            cached.push(await timed(() => catalog(false)));
            process.stderr.write(`round ${r + 1}/${ROUNDS}: raw ${raw[r].toFixed(1)} ms, fresh ${fresh[r].toFixed(1)} ms, cached ${cached[r].toFixed(1)} ms\n`);
        }
        const rawP50 = median(raw);
        console.log(JSON.stringify({
            bench: 'catalog',
            variant: 'model-catalog',
            tools_listed: TOOLS + 20,
            model_tools: warm.tools.length,
            rounds: ROUNDS,
            raw_tools_list_p50_ms: (0, harness_1.round3)(rawP50),
            fresh_p50_ms: (0, harness_1.round3)(median(fresh)),
            cached_p50_ms: (0, harness_1.round3)(median(cached)),
            fresh_over_raw: (0, harness_1.round3)(median(fresh) / rawP50),
            note: 'fresh = app-safe + full listings via the registry, pinning, composition; raw = one direct listing',
        }));
        const uris = [
            'ui://system-monitor/mcp-app.html',
            'UI://Srv/a/%7Euser/b.html#frag',
            'https://Example.COM:443/a/b?x=1&y=2',
            'http://bücher.example/%41%2f',
            'ui://srv/assets/app.js?v=3',
        ];
        let calls = 0;
        const deadline = node_perf_hooks_1.performance.now() + URI_MS;
        const t0 = node_perf_hooks_1.performance.now();
        while (node_perf_hooks_1.performance.now() < deadline)
            for (let i = 0; i < 1000; i++)
                (0, policy_1.canonicalizeUri)(uris[calls++ % uris.length]);
        const seconds = (node_perf_hooks_1.performance.now() - t0) / 1000;
        raw.push(await timed(rawList));
        console.log(JSON.stringify({
            bench: 'catalog',
            variant: 'canonicalize-uri',
            calls,
            calls_s: Math.round(calls / seconds),
            us_per_call: (0, harness_1.round3)((seconds * 1e6) / calls),
            raw_tools_list_p50_ms: (0, harness_1.round3)(median(raw)),
            raw_list_equivalent_calls: Math.round((calls / seconds) * (median(raw) / 1000)),
        }));
    }
    finally {
        await direct.close().catch(() => undefined);
        await services?.stop().catch(() => undefined);
        await transport.close().catch(() => undefined);
        await nats.stop();
        await (0, testing_1.dropSchemasWithPrefix)(prefix);
    }
}
(0, harness_1.runBench)('bench:catalog', main);
//# sourceMappingURL=catalog.bench.js.map