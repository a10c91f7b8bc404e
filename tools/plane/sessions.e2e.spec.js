"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const jose_1 = require("jose");
const contracts_1 = require("@apphost/contracts");
const testing_1 = require("@apphost/testing");
const services_1 = require("./services");
/**
 * The session routes end to end: the real gateway (JWT auth) in front of the real lifecycle-store, both booted from
 * their definitions (loaded by path, as the plane composes them) on the real NATS and PostgreSQL.
 */
const ISSUER = 'https://issuer.e2e';
const AUDIENCE = 'apphost-e2e';
const SECRET = 'an-e2e-secret-that-is-at-least-32-bytes-long';
const token = (sub, tenant = 'acme', scope = 'runtime') => new jose_1.SignJWT({ tenant, scope })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));
(0, testing_1.describeOnPostgres)('session routes', (target) => {
    describe('through the gateway and the lifecycle-store', () => {
        const prefix = (0, testing_1.uniquePrefix)();
        let lifecycle;
        let gateway;
        let stop;
        let base;
        let alice;
        beforeAll(async () => {
            const definitions = (0, services_1.loadServiceDefinitions)();
            const byName = (name) => definitions.find((d) => d.name === name);
            const booted = await (0, testing_1.bootServices)(prefix, {
                lifecycle: { definition: byName('lifecycle-store'), env: { DATABASE_URL: target.url } },
                gateway: {
                    definition: byName('gateway'),
                    env: { AUTH_MODE: 'jwt', AUTH_JWT_ISSUER: ISSUER, AUTH_JWT_AUDIENCE: AUDIENCE, AUTH_JWT_HS256_SECRET: SECRET },
                },
            });
            ({ lifecycle, gateway } = booted.services);
            stop = booted.stop;
            base = gateway.running.url.replace('[::1]', '127.0.0.1');
            alice = await token('alice');
        }, 60_000);
        afterAll(async () => {
            await stop?.();
            await (0, testing_1.dropSchemasWithPrefix)(prefix, target.url);
        });
        async function http(method, path, bearer, body) {
            const res = await fetch(`${base}${path}`, {
                method,
                headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
                body: body === undefined ? undefined : JSON.stringify(body),
            });
            return { status: res.status, body: (await res.json()) };
        }
        it('POST /v1/sessions → 201; GET reads it back; the same creationOperationId retried is the same session', async () => {
            const created = await http('POST', '/v1/sessions', alice, { appName: 'dash', sessionId: 'e2e-1', creationOperationId: 'op-1' });
            expect(created).toEqual({ status: 201, body: { sessionId: 'e2e-1', appName: 'dash', userId: 'alice', incarnation: 1, state: 'ACTIVE' } });
            expect(await http('POST', '/v1/sessions', alice, { appName: 'dash', sessionId: 'e2e-1', creationOperationId: 'op-1' })).toEqual(created);
            expect(await http('GET', '/v1/sessions/e2e-1?appName=dash', alice)).toEqual({ status: 200, body: created.body });
        });
        it('concurrent creates of one id without the same operation id: one 201, the others 409 CONFLICT', async () => {
            const results = await Promise.all(Array.from({ length: 8 }, () => http('POST', '/v1/sessions', alice, { appName: 'dash', sessionId: 'e2e-race' })));
            expect(results.filter((r) => r.status === 201)).toHaveLength(1);
            for (const r of results.filter((x) => x.status !== 201))
                expect(r).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT' } } });
        });
        it("another tenant's or user's session reads as 404, by id and by events", async () => {
            await http('POST', '/v1/sessions', alice, { appName: 'dash', sessionId: 'e2e-private' });
            const bob = await token('bob');
            const mallory = await token('alice', 'other-tenant');
            for (const bearer of [bob, mallory]) {
                expect((await http('GET', '/v1/sessions/e2e-private?appName=dash', bearer)).status).toBe(404);
                expect((await http('GET', '/v1/sessions/e2e-private/events?appName=dash', bearer)).status).toBe(404);
                expect((await http('DELETE', '/v1/sessions/e2e-private?appName=dash', bearer)).status).toBe(404);
            }
            expect((await http('GET', '/v1/sessions/e2e-private?appName=dash&userId=bob', alice)).status).toBe(404);
            expect((await http('GET', '/v1/sessions/e2e-private?appName=dash', alice)).status).toBe(200);
        });
        it('an invalid body is 400 INVALID_ARGUMENT and creates nothing', async () => {
            const res = await http('POST', '/v1/sessions', alice, { appName: 'dash', sessionId: 'e2e-bad', extra: true });
            expect(res).toMatchObject({ status: 400, body: { error: { code: 'INVALID_ARGUMENT' } } });
            expect((await http('GET', '/v1/sessions/e2e-bad?appName=dash', alice)).status).toBe(404);
        });
        it('GET /v1/sessions/{id}/events pages the ledger in its public serialization (no sealed bytes, digests or grants)', async () => {
            await http('POST', '/v1/sessions', alice, { appName: 'dash', sessionId: 'e2e-events' });
            const session = { tenant: 'acme', appName: 'dash', userId: 'alice', sessionId: 'e2e-events' };
            await lifecycle.client.request(contracts_1.LifecycleAppendEvents, {
                session,
                incarnation: 1,
                provenance: { path: 'user-turn' },
                events: [
                    { author: 'user', content: { parts: [{ text: 'hi' }] }, audience: 'app_audit' },
                    {
                        author: 'agent',
                        functionResponses: [{ id: 'c1', name: 'show', response: { content: [], structuredContent: { s: 'SEALED-BYTES' }, _meta: { grant: 'GRANT' } } }],
                        widgets: [
                            {
                                schemaVersion: 1,
                                resourceUri: 'ui://dash/v.html',
                                correlation: { functionCallId: 'c1' },
                                serverId: 'srv',
                                toolsetId: 'ts',
                                bindingRevision: 'k1:x',
                                sealedResultRef: { recordId: 'rec_0123456789abcdef0123', schemaVersion: 1 },
                            },
                        ],
                    },
                    { author: 'agent', content: { parts: [{ text: 'done' }] } },
                ],
            });
            const first = await http('GET', '/v1/sessions/e2e-events/events?appName=dash&limit=2', alice);
            expect(first.status).toBe(200);
            expect(first.body).toMatchObject({ sessionId: 'e2e-events', incarnation: 1, nextAfterId: 2 });
            const events = first.body.events;
            expect(events.map((e) => [e.id, e.audience, e.invocationOrigin])).toEqual([
                [1, null, 'user'],
                [2, null, 'user'],
            ]);
            expect(JSON.stringify(first.body)).not.toMatch(/SEALED-BYTES|GRANT|digest/);
            const second = await http('GET', '/v1/sessions/e2e-events/events?appName=dash&afterId=2', alice);
            expect(second.body).toMatchObject({ nextAfterId: null, events: [{ id: 3 }] });
        });
        it('DELETE → 200 DELETED; the session then reads as 404; re-creating it starts incarnation 2', async () => {
            await http('POST', '/v1/sessions', alice, { appName: 'dash', sessionId: 'e2e-del' });
            expect(await http('DELETE', '/v1/sessions/e2e-del?appName=dash', alice)).toEqual({
                status: 200,
                body: { sessionId: 'e2e-del', appName: 'dash', userId: 'alice', incarnation: 1, state: 'DELETED' },
            });
            expect(await http('DELETE', '/v1/sessions/e2e-del?appName=dash', alice)).toMatchObject({ status: 200, body: { state: 'DELETED' } });
            expect((await http('GET', '/v1/sessions/e2e-del?appName=dash', alice)).status).toBe(404);
            expect((await http('GET', '/v1/sessions/e2e-del/events?appName=dash', alice)).status).toBe(404);
            expect(await http('POST', '/v1/sessions', alice, { appName: 'dash', sessionId: 'e2e-del' })).toMatchObject({
                status: 201,
                body: { incarnation: 2, state: 'ACTIVE' },
            });
        });
    });
});
//# sourceMappingURL=sessions.e2e.spec.js.map