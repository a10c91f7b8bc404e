"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const jose_1 = require("jose");
const testing_1 = require("@apphost/testing");
const services_1 = require("./services");
// The real gateway in front of the real lifecycle-store, whose PostgreSQL sits behind a link the test cuts.
jest.setTimeout(30_000);
const ISSUER = 'https://issuer.e2e';
const AUDIENCE = 'apphost-e2e';
const SECRET = 'an-e2e-secret-that-is-at-least-32-bytes-long';
const token = () => new jose_1.SignJWT({ tenant: 'acme', scope: 'runtime' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));
describe('a PostgreSQL outage at the HTTP edge', () => {
    const prefix = (0, testing_1.uniquePrefix)();
    let proxy;
    let stop;
    let base;
    beforeAll(async () => {
        const upstream = new URL(testing_1.TEST_DATABASE_URL);
        proxy = await (0, testing_1.startTcpProxy)(upstream.hostname, Number(upstream.port || 5432));
        upstream.host = `127.0.0.1:${proxy.port}`;
        const definitions = (0, services_1.loadServiceDefinitions)();
        const byName = (name) => {
            const found = definitions.find((d) => d.name === name);
            if (!found)
                throw new Error(`no service definition named ${name}`);
            return found;
        };
        const booted = await (0, testing_1.bootServices)(prefix, {
            lifecycle: { definition: byName('lifecycle-store'), env: { DATABASE_URL: upstream.toString() } },
            gateway: {
                definition: byName('gateway'),
                env: { AUTH_MODE: 'jwt', AUTH_JWT_ISSUER: ISSUER, AUTH_JWT_AUDIENCE: AUDIENCE, AUTH_JWT_HS256_SECRET: SECRET },
            },
        });
        stop = booted.stop;
        base = String(booted.services.gateway.running.url).replace('[::1]', '127.0.0.1');
    }, 60_000);
    afterEach(() => proxy.resume());
    afterAll(async () => {
        await stop?.();
        await proxy?.close();
        await (0, testing_1.dropSchemasWithPrefix)(prefix);
    });
    const createSession = async (sessionId) => {
        const res = await fetch(`${base}/v1/sessions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${await token()}` },
            body: JSON.stringify({ appName: 'dash', sessionId, creationOperationId: `op-${sessionId}` }),
        });
        return { status: res.status, body: (await res.json()) };
    };
    it('PostgreSQL refusing connections is 503 UNAVAILABLE (retryable), not 500; the retry after recovery is 201', async () => {
        proxy.cut();
        const refused = await createSession('outage-1');
        expect(refused).toMatchObject({ status: 503, body: { error: { code: 'UNAVAILABLE', retryable: true } } });
        proxy.resume();
        expect(await createSession('outage-1')).toMatchObject({ status: 201, body: { sessionId: 'outage-1', state: 'ACTIVE' } });
    });
});
//# sourceMappingURL=store-outage.e2e.spec.js.map