"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const contracts_1 = require("@apphost/contracts");
const mcp_1 = require("@apphost/mcp");
const testing_1 = require("@apphost/testing");
const catalog_harness_1 = require("./catalog-harness");
const services_1 = require("./services");
// Seconds, not minutes: the whole point is that a dead governed-operations does not hold the caller.
jest.setTimeout(60_000);
// Room for the batch to reach its tool call (classification lists the toolset, the stdio server starts) first.
const DEADLINE_MS = 10_000;
const principal = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };
/**
 * governed-operations SIGKILLed while a batch's tool call runs: the gateway published the batch, so it cannot know
 * whether it ran, and answers OUTCOME_UNKNOWN when the request's deadline (`x-apphost-timeout-ms`) runs out, not later.
 */
describe('a governed-operations crash mid-batch', () => {
    const prefix = (0, testing_1.uniquePrefix)();
    let nats;
    let plane;
    let governed;
    let alice;
    beforeAll(async () => {
        nats = await (0, testing_1.startPrivateNats)();
        governed = (0, testing_1.spawnTs)('apps/governed-operations/src/main.ts', {
            NATS_URL: nats.url,
            REDIS_URL: testing_1.TEST_REDIS_URL,
            DATABASE_SCHEMA_PREFIX: prefix,
            HTTP_HOST: '127.0.0.1',
            HTTP_PORT: String(await (0, testing_1.freePort)()),
            LOG_LEVEL: 'warn',
        });
        const definitions = (0, services_1.loadServiceDefinitions)();
        const byName = (name) => {
            const definition = definitions.find((d) => d.name === name);
            if (!definition)
                throw new Error(`no service definition named ${name}`);
            return definition;
        };
        plane = await (0, testing_1.bootServices)(prefix, {
            lifecycle: { definition: byName('lifecycle-store') },
            sealed: { definition: byName('sealed-result-store'), env: { SEALED_GC_INTERVAL_MS: '0' } },
            registry: { definition: byName('binding-registry'), env: { REGISTRY_ALLOW_STDIO: 'true', INSTANCE_ID: 'reg-crash' } },
            catalog: { definition: byName('catalog-policy'), env: { CATALOG_APP_TOOLSETS: JSON.stringify({ 'slow-app': [{ toolsetId: 'slow' }] }) } },
            gateway: { definition: byName('gateway'), env: catalog_harness_1.JWT_GATEWAY_ENV },
        }, { NATS_URL: nats.url });
        await (0, testing_1.eventually)(() => plane.services.registry.client.request((0, contracts_1.describeContract)('governed-operations'), {}, { timeoutMs: 500 }).then(() => true, () => undefined), 30_000, 200).catch((error) => {
            throw new Error(`${error.message}\n${governed.output().stderr}`);
        });
        const put = await plane.services.registry.client.request(contracts_1.RegistryPutToolset, { toolsetId: 'slow', spec: (0, catalog_harness_1.fixtureSpec)('stateful-nonce', null) }, { timeoutMs: 30_000 });
        expect(put.status.state).toBe('MODEL_ONLY');
        alice = await (0, catalog_harness_1.token)('alice');
    }, 90_000);
    afterAll(async () => {
        if (governed.exitCode === null && governed.signalCode === null)
            governed.kill('SIGKILL');
        await plane?.stop();
        await nats?.stop();
        await (0, testing_1.dropSchemasWithPrefix)(prefix);
    });
    const post = (url, body, headers = {}) => fetch(`${(0, catalog_harness_1.baseUrlOf)(plane.services.gateway)}${url}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
    });
    /** How many `slow` calls the session's connection has begun (the fixture counts them per connection). */
    const slowStarted = async () => {
        const handle = await plane.services.registry.client.request(contracts_1.RegistryAcquireGeneration, {
            toolsetId: 'slow',
            connectionClass: 'full',
            principal,
            session: { key: { tenant: 'acme', appName: 'slow-app', userId: 'alice', sessionId: 's-crash' }, incarnation: 1 },
            holder: { kind: 'view', id: 'probe-crash' },
        });
        const reply = await (0, mcp_1.requestOnGeneration)(plane.services.registry.client, contracts_1.ConnCallTool, handle, {
            callId: `probe-${Date.now()}`,
            name: 'whoami',
            arguments: {},
        });
        return reply.result.structuredContent.slowStarted;
    };
    it('answers the HTTP caller with OUTCOME_UNKNOWN within the request deadline', async () => {
        expect((await post('/v1/sessions', { appName: 'slow-app', sessionId: 's-crash' })).status).toBe(201);
        const sent = performance.now();
        const pending = post('/v1/sessions/s-crash/tool-batches', { appName: 'slow-app', invocationId: 'inv-crash', calls: [{ tool: 'slow', arguments: { ms: 30_000 } }] }, { 'x-apphost-timeout-ms': String(DEADLINE_MS) });
        await (0, testing_1.eventually)(async () => ((await slowStarted()) >= 1 ? true : undefined), DEADLINE_MS - 2000, 100);
        governed.kill('SIGKILL');
        expect((await (0, testing_1.waitForExit)(governed, 5000)).signal).toBe('SIGKILL');
        const res = await pending;
        const elapsedMs = performance.now() - sent;
        expect(res.status).toBe(504);
        const body = (await res.json());
        expect(body.error).toMatchObject({ code: 'OUTCOME_UNKNOWN', retryable: false });
        expect(body.error.message).not.toMatch(/apphost\./);
        // Bounded by the deadline (plus scheduling slack), not by the 120 s HTTP default or the tool's 30 s.
        expect(elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
        expect(elapsedMs).toBeLessThan(DEADLINE_MS + 2000);
    });
});
//# sourceMappingURL=governed-crash.e2e.spec.js.map