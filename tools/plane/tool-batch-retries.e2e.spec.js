"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const runtime_1 = require("@apphost/runtime");
const contracts_1 = require("@apphost/contracts");
const mcp_1 = require("@apphost/mcp");
const testing_1 = require("@apphost/testing");
const catalog_harness_1 = require("./catalog-harness");
const services_1 = require("./services");
const tool_batches_harness_1 = require("./tool-batches-harness");
/**
 * One execution per call through the whole plane: the real gateway, lifecycle-store, sealed-result-store (booted
 * on its own so the test can stop and restart it), binding-registry, catalog-policy and governed-operations on a
 * private NATS, real PostgreSQL and Redis, and the real stdio `stateful-nonce` server. Every execution of
 * `start-session` mints a new nonce on its connection, so "the connection's nonce is still the first one" proves
 * the tool ran once.
 */
jest.setTimeout(60_000);
const principal = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };
const definitions = (0, services_1.loadServiceDefinitions)();
const byName = (name) => {
    const definition = definitions.find((d) => d.name === name);
    if (!definition)
        throw new Error(`no service definition named ${name}`);
    return definition;
};
describe('tool batch retries in the plane', () => {
    const prefix = (0, testing_1.uniquePrefix)();
    let nats;
    let providers;
    let plane;
    let sealed;
    let lifecycle;
    let alice;
    const bootSealed = async () => (sealed = await (0, testing_1.bootService)(byName('sealed-result-store'), prefix, { NATS_URL: nats.url, SEALED_GC_INTERVAL_MS: '0' }));
    const bootLifecycle = async () => (lifecycle = await (0, testing_1.bootService)(byName('lifecycle-store'), prefix, {
        NATS_URL: nats.url,
        LIFECYCLE_CASCADE_PARTICIPANTS: 'governed-operations,sealed-result-store',
    }));
    const post = async (url, body, timeoutMs) => {
        const res = await fetch(`${(0, catalog_harness_1.baseUrlOf)(plane.services.gateway)}${url}`, {
            method: 'POST',
            headers: {
                authorization: `Bearer ${alice}`,
                'content-type': 'application/json',
                ...(timeoutMs !== undefined ? { 'x-apphost-timeout-ms': String(timeoutMs) } : {}),
            },
            body,
        });
        return { status: res.status, body: (await res.json()) };
    };
    const batch = (sessionId, body, timeoutMs) => post(`/v1/sessions/${sessionId}/tool-batches`, JSON.stringify(body), timeoutMs);
    const startSession = (sessionId, functionCallId, label = 'first', timeoutMs) => batch(sessionId, { appName: 'nonce-app', invocationId: 'inv-1', calls: [{ functionCallId, tool: 'start-session', arguments: { label } }] }, timeoutMs);
    /** The nonce the session's app-safe connection holds now (null: start-session never ran there). */
    const nonceOf = async (sessionId) => {
        const generation = await plane.services.registry.client.request(contracts_1.RegistryAcquireGeneration, {
            toolsetId: 'nonce',
            connectionClass: 'app-safe',
            principal,
            session: { key: { tenant: 'acme', appName: 'nonce-app', userId: 'alice', sessionId }, incarnation: 1 },
            holder: { kind: 'view', id: `probe-${sessionId}` },
        }, { timeoutMs: 30_000 });
        const reply = await (0, mcp_1.requestOnGeneration)(plane.services.registry.client, contracts_1.ConnCallTool, generation, {
            callId: `probe-${Date.now()}`,
            name: 'whoami',
            arguments: {},
        });
        return reply.result.structuredContent.nonce;
    };
    const nonceInReply = (body) => {
        const [response] = body['functionResponses'];
        return JSON.parse(response.response.content[0].text).nonce;
    };
    const newSession = async (sessionId) => expect((await post('/v1/sessions', JSON.stringify({ appName: 'nonce-app', sessionId }))).status).toBe(201);
    beforeAll(async () => {
        nats = await (0, testing_1.startPrivateNats)();
        providers = await (0, testing_1.startFakeProviders)(nats.url, ['export-audit']);
        await bootSealed();
        await bootLifecycle();
        plane = await (0, testing_1.bootServices)(prefix, {
            registry: {
                definition: byName('binding-registry'),
                env: { REGISTRY_ALLOW_STDIO: 'true', REGISTRY_PROVIDER_TIMEOUT_MS: '1000', INSTANCE_ID: 'reg-retries' },
            },
            catalog: { definition: byName('catalog-policy'), env: { CATALOG_APP_TOOLSETS: JSON.stringify({ 'nonce-app': [{ toolsetId: 'nonce' }] }) } },
            governed: { definition: byName('governed-operations'), env: {} },
            gateway: { definition: byName('gateway'), env: catalog_harness_1.JWT_GATEWAY_ENV },
        }, { NATS_URL: nats.url });
        alice = await (0, catalog_harness_1.token)('alice');
        await (0, tool_batches_harness_1.bindNonceToolset)(plane.services.registry);
    }, 120_000);
    afterAll(async () => {
        await plane?.stop();
        await sealed?.stop();
        await lifecycle?.stop();
        await providers?.stop();
        await nats?.stop();
        await (0, testing_1.dropSchemasWithPrefix)(prefix);
    });
    it('a retried batch (same invocation and call ids) runs the tool once and returns the same event; other arguments under those ids are 409', async () => {
        await newSession('r-once');
        const first = await startSession('r-once', 'call-1');
        expect(first.status).toBe(200);
        const again = await startSession('r-once', 'call-1');
        expect(again).toEqual(first);
        expect(await nonceOf('r-once')).toBe(nonceInReply(first.body));
        const conflict = await startSession('r-once', 'call-1', 'other');
        expect(conflict.status).toBe(409);
        expect(conflict.body).toMatchObject({ error: { code: 'CONFLICT', details: { reason: 'CALL_ID_REUSED' } } });
        expect(await nonceOf('r-once')).toBe(nonceInReply(first.body));
    });
    it('arguments that are not canonical I-JSON are 400 INVALID_ARGUMENT at the edge, and the tool never runs', async () => {
        await newSession('r-args');
        const surrogate = await startSession('r-args', 'call-s', '\ud800');
        expect(surrogate.status).toBe(400);
        expect(surrogate.body).toMatchObject({
            error: { code: 'INVALID_ARGUMENT', details: { reason: 'ARGUMENTS_NOT_CANONICAL', canonical: { reason: 'lone-surrogate' } } },
        });
        // 1e400 is what a model may emit; JSON.parse makes Infinity of it (the bus codec would have made it null).
        const infinite = await post('/v1/sessions/r-args/tool-batches', '{"appName":"nonce-app","invocationId":"inv-1","calls":[{"functionCallId":"call-n","tool":"start-session","arguments":{"label":1e400}}]}');
        expect(infinite.status).toBe(400);
        expect(infinite.body).toMatchObject({ error: { details: { reason: 'ARGUMENTS_NOT_CANONICAL', canonical: { reason: 'non-finite-number' } } } });
        expect(await nonceOf('r-args')).toBeNull();
    });
    it('the sealed-result store down at admission: 503 UNAVAILABLE and nothing ran; once it is back the retry runs the tool once', async () => {
        await newSession('r-sealed');
        await sealed?.stop();
        sealed = undefined;
        const down = await startSession('r-sealed', 'call-1');
        expect(down.status).toBe(503);
        expect(down.body).toMatchObject({ error: { code: 'UNAVAILABLE', retryable: true } });
        expect(await nonceOf('r-sealed')).toBeNull();
        await bootSealed();
        const retried = await startSession('r-sealed', 'call-1');
        expect(retried.status).toBe(200);
        expect(await nonceOf('r-sealed')).toBe(nonceInReply(retried.body));
    });
    it('the lifecycle-store stopped after the tool ran: 504 OUTCOME_UNKNOWN (EXECUTED_NOT_RECORDED); the retry does not run the tool again', async () => {
        await newSession('r-ledger');
        const faults = plane.services.governed.running.app.get(runtime_1.FAULT_POINTS);
        faults.arm('batch.before-append', async () => {
            await lifecycle?.stop();
            lifecycle = undefined;
        });
        const lost = await startSession('r-ledger', 'call-1');
        expect(lost.status).toBe(504);
        expect(lost.body).toMatchObject({
            error: { code: 'OUTCOME_UNKNOWN', retryable: false, details: { reason: 'EXECUTED_NOT_RECORDED', cause: 'UNAVAILABLE' } },
        });
        const ran = await nonceOf('r-ledger');
        expect(ran).toMatch(/^[0-9a-f-]{36}$/);
        await bootLifecycle();
        const retried = await startSession('r-ledger', 'call-1', 'first', 2_000);
        expect(retried.status).toBe(504);
        expect(retried.body).toMatchObject({ error: { code: 'OUTCOME_UNKNOWN', details: { reason: 'CALL_IN_FLIGHT' } } });
        expect(await nonceOf('r-ledger')).toBe(ran);
    });
});
//# sourceMappingURL=tool-batch-retries.e2e.spec.js.map