import { SignJWT } from 'jose';
import { bootServices, dropSchemasWithPrefix, startTcpProxy, TEST_DATABASE_URL, uniquePrefix, type TcpProxy } from '@apphost/testing';
import { loadServiceDefinitions } from './services';

// The real gateway in front of the real lifecycle-store, whose PostgreSQL sits behind a link the test cuts.
jest.setTimeout(30_000);

const ISSUER = 'https://issuer.e2e';
const AUDIENCE = 'apphost-e2e';
const SECRET = 'an-e2e-secret-that-is-at-least-32-bytes-long';
const token = () =>
  new SignJWT({ tenant: 'acme', scope: 'runtime' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));

describe('a PostgreSQL outage at the HTTP edge', () => {
  const prefix = uniquePrefix();
  let proxy: TcpProxy;
  let stop: (() => Promise<void>) | undefined;
  let base: string;

  beforeAll(async () => {
    const upstream = new URL(TEST_DATABASE_URL);
    proxy = await startTcpProxy(upstream.hostname, Number(upstream.port || 5432));
    upstream.host = `127.0.0.1:${proxy.port}`;
    const definitions = loadServiceDefinitions();
    const byName = (name: string) => {
      const found = definitions.find((d) => d.name === name);
      if (!found) throw new Error(`no service definition named ${name}`);
      return found;
    };
    const booted = await bootServices(prefix, {
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
    await dropSchemasWithPrefix(prefix);
  });

  const createSession = async (sessionId: string) => {
    const res = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await token()}` },
      body: JSON.stringify({ appName: 'dash', sessionId, creationOperationId: `op-${sessionId}` }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('PostgreSQL refusing connections is 503 UNAVAILABLE (retryable), not 500; the retry after recovery is 201', async () => {
    proxy.cut();
    const refused = await createSession('outage-1');
    expect(refused).toMatchObject({ status: 503, body: { error: { code: 'UNAVAILABLE', retryable: true } } });
    proxy.resume();
    expect(await createSession('outage-1')).toMatchObject({ status: 201, body: { sessionId: 'outage-1', state: 'ACTIVE' } });
  });
});
