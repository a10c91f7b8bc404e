import { SignJWT } from 'jose';
import { BusServer, type NatsTransport } from '@apphost/bus';
import { LifecycleSetPrincipalRevocation, type RequestOf } from '@apphost/contracts';
import { bootService, connectTestTransport, uniquePrefix, type ServiceUnderTest } from '@apphost/testing';
import { ViewTokens } from '../auth/view-tokens';
import { gatewayService } from '../service';

// The gateway in jwt mode; a stand-in of lifecycle-store's set-principal-revocation (idempotent, `since` kept from
// the first revocation, as the contract says) answers on this file's bus namespace and records every request.
const ISSUER = 'https://issuer.test';
const AUDIENCE = 'apphost';
const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long!';
const VIEW_SECRET = Buffer.alloc(32, 0x2c);

const sign = (scope: string) =>
  new SignJWT({ tenant: 'ops', scope })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('operator')
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));

const revokedSince = new Map<string, string>();
const asked: RequestOf<typeof LifecycleSetPrincipalRevocation>[] = [];

let gateway: ServiceUnderTest;
let standInTransport: NatsTransport;
let standIn: BusServer;
let base: string;

beforeAll(async () => {
  standInTransport = await connectTestTransport('stand-in-lifecycle');
  standIn = new BusServer({
    transport: standInTransport,
    instanceId: 'stand-in',
    queueGroup: 'lifecycle-store',
    logger: { error: () => undefined, warn: () => undefined },
  });
  standIn.register(LifecycleSetPrincipalRevocation, (r) => {
    asked.push(r);
    const id = `${r.principal.tenant}\n${r.principal.subject}`;
    const was = revokedSince.get(id);
    if (r.revoked && !was) revokedSince.set(id, new Date().toISOString());
    if (!r.revoked) revokedSince.delete(id);
    return { revoked: r.revoked, changed: r.revoked !== (was !== undefined), since: revokedSince.get(id) ?? null };
  });
  standIn.start();
  await standIn.ready();
  gateway = await bootService(gatewayService, uniquePrefix(), {
    AUTH_MODE: 'jwt',
    AUTH_JWT_ISSUER: ISSUER,
    AUTH_JWT_AUDIENCE: AUDIENCE,
    AUTH_JWT_HS256_SECRET: SECRET,
    GATEWAY_VIEW_TOKEN_SECRET: VIEW_SECRET.toString('base64'),
  });
  base = String(gateway.running.url).replace('[::1]', '127.0.0.1');
}, 30_000);

afterAll(async () => {
  await gateway?.stop();
  await standIn?.stop(100);
  await standInTransport?.close();
});

beforeEach(() => {
  asked.length = 0;
});

async function post(route: string, token: string, body: unknown) {
  const res = await fetch(`${base}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const bob = { tenant: 'acme', subject: 'bob' };

describe('POST /v1/principals:revoke and :restore', () => {
  it('round trip with admin: revoke, revoke again (unchanged, same since), restore, restore again', async () => {
    const admin = await sign('admin');
    const revoked = await post('/v1/principals:revoke', admin, bob);
    expect(revoked).toEqual({ status: 200, body: { tenant: 'acme', subject: 'bob', revoked: true, changed: true, since: expect.any(String) } });
    expect(await post('/v1/principals:revoke', admin, bob)).toEqual({ status: 200, body: { ...revoked.body, changed: false } });
    expect(await post('/v1/principals:restore', admin, bob)).toEqual({
      status: 200,
      body: { tenant: 'acme', subject: 'bob', revoked: false, changed: true, since: null },
    });
    expect(await post('/v1/principals:restore', admin, bob)).toEqual({
      status: 200,
      body: { tenant: 'acme', subject: 'bob', revoked: false, changed: false, since: null },
    });
    expect(asked).toEqual([
      { principal: bob, revoked: true },
      { principal: bob, revoked: true },
      { principal: bob, revoked: false },
      { principal: bob, revoked: false },
    ]);
  });

  it('needs the admin scope (403), from any other token, a view token included, and asks nothing', async () => {
    const viewToken = (await new ViewTokens({ secret: VIEW_SECRET }).mint({ tenant: 'acme', userId: 'bob', appName: 'dash', sessionId: 's1', incarnation: 1 }))
      .token;
    for (const token of [await sign('runtime delegate'), await sign('view export audit'), viewToken]) {
      for (const route of ['/v1/principals:revoke', '/v1/principals:restore']) {
        const res = await post(route, token, bob);
        expect(res).toMatchObject({ status: 403, body: { error: { code: 'PERMISSION_DENIED', message: 'missing required scope: admin' } } });
      }
    }
    expect(asked).toEqual([]);
  });

  it('refuses a bad body (400) before asking anything; an unknown method is not a route', async () => {
    const admin = await sign('admin');
    for (const body of [{}, { tenant: 'acme' }, { tenant: 'has.dots', subject: 'bob' }, { ...bob, scopes: ['admin'] }, { tenant: 'acme', subject: '' }]) {
      expect(await post('/v1/principals:revoke', admin, body)).toMatchObject({ status: 400, body: { error: { code: 'INVALID_ARGUMENT' } } });
    }
    expect((await post('/v1/principals:explode', admin, bob)).status).toBe(404);
    expect(asked).toEqual([]);
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    for (const route of ['/v1/principals:revoke', '/v1/principals:restore']) {
      expect(Object.keys(doc.paths[route]['post'].responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '503']));
    }
  });
});
