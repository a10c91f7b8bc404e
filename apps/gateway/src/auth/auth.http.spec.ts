import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Controller, Get, HttpCode, Param, Post, Query, type DynamicModule, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import type { Principal } from '@apphost/contracts';
import { HttpErrorFilter } from '../http/error.filter';
import { ownSessionKey } from '../http/request-input';
import { AuthModule } from './auth.module';
import { BrowserRoute } from './browser-route.decorator';
import { CurrentPrincipal } from './current-principal.decorator';
import { DevelopmentTokenProvider } from './development-token-provider';
import { Public } from './public.decorator';
import { RequireScopes } from './require-scopes.decorator';
import { TokenVerifier } from './token-verifier';
import { ViewTokens } from './view-tokens';

@Controller()
class TestController {
  @Public()
  @Get('healthz')
  health() {
    return { ok: true };
  }

  @Get('me')
  me(@CurrentPrincipal() principal: Principal) {
    return principal;
  }

  @RequireScopes('admin')
  @Get('admin')
  admin() {
    return { admin: true };
  }

  @RequireScopes('runtime')
  @Get('runtime')
  runtime() {
    return { runtime: true };
  }

  /** A session route a view token may use: it answers the session key the principal reaches. */
  @RequireScopes('view')
  @Get('sessions/:sessionId/probe')
  probe(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Query('appName') appName: string) {
    return ownSessionKey(principal, appName, sessionId, undefined);
  }

  @BrowserRoute()
  @Post('browser')
  @HttpCode(200)
  browser(@CurrentPrincipal() principal: Principal) {
    return { subject: principal.subject };
  }
}

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'apphost-gateway';
const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long!';
const ALLOWED_ORIGIN = 'https://app.example.com';

interface Running {
  app: INestApplication;
  url: string;
}

async function start(verifier: TokenVerifier | DynamicModule, origins: string[] = [ALLOWED_ORIGIN]): Promise<Running> {
  const auth = verifier instanceof TokenVerifier ? AuthModule.forRoot(verifier, origins) : verifier;
  const moduleRef = await Test.createTestingModule({ imports: [auth], controllers: [TestController] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  app.useGlobalFilters(new HttpErrorFilter());
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl() };
}

function sign(claims: JWTPayload, options: { secret?: string; exp?: number | string } = {}): Promise<string> {
  // Claims passed in override the defaults, so each test changes exactly one thing.
  const jwt = new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', tenant: 'acme', scope: 'runtime view', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(options.exp ?? '5m');
  return jwt.sign(new TextEncoder().encode(options.secret ?? SECRET));
}

async function get(url: string, token?: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function expectErrorBody(body: Record<string, unknown>, code: string, message: string) {
  // Exactly the envelope: no stack, no token, nothing else.
  expect(body).toEqual({ error: { code, message, retryable: false } });
}

describe('auth over HTTP (HS256)', () => {
  let running: Running;
  beforeAll(async () => {
    running = await start(new TokenVerifier({ issuer: ISSUER, audience: AUDIENCE, key: { secret: SECRET } }));
  });
  afterAll(() => running.app.close());

  it('lets a public route through without a token', async () => {
    expect(await get(`${running.url}/healthz`)).toEqual({ status: 200, body: { ok: true } });
  });

  it('returns the principal for a valid token', async () => {
    const { status, body } = await get(`${running.url}/me`, await sign({}));
    expect(status).toBe(200);
    expect(body).toEqual({ tenant: 'acme', subject: 'alice', scopes: ['runtime', 'view'] });
  });

  it('reads scopes from an scp array', async () => {
    const { body } = await get(`${running.url}/me`, await sign({ scope: undefined, scp: ['admin'] }));
    expect(body['scopes']).toEqual(['admin']);
  });

  it.each([
    ['missing header', undefined, 'missing bearer token'],
    ['an expired token', sign({}, { exp: Math.floor(Date.now() / 1000) - 60 }), 'token expired'],
    ['a wrong audience', sign({ aud: 'someone-else' }), 'token audience mismatch'],
    ['a wrong issuer', sign({ iss: 'https://evil.test' }), 'token issuer mismatch'],
    ['a foreign signature', sign({}, { secret: 'another-secret-that-is-also-32-bytes-long!!' }), 'token signature invalid'],
    ['a token without tenant', sign({ tenant: undefined }), 'token missing tenant claim'],
    ['garbage', Promise.resolve('not.a.jwt'), 'token malformed'],
  ])('rejects %s with 401', async (_name, token, message) => {
    const { status, body } = await get(`${running.url}/me`, token ? await token : undefined);
    expect(status).toBe(401);
    expectErrorBody(body, 'UNAUTHENTICATED', message);
  });

  it('rejects a non-Bearer authorization scheme', async () => {
    const { status, body } = await get(`${running.url}/me`, undefined, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` });
    expect(status).toBe(401);
    expectErrorBody(body, 'UNAUTHENTICATED', 'missing bearer token');
  });

  it('rejects an unsigned alg:none token', async () => {
    const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: ISSUER, aud: AUDIENCE, sub: 'mallory', tenant: 'acme', scope: 'admin', exp: now + 300 })}.`;
    const { status, body } = await get(`${running.url}/admin`, token);
    expect(status).toBe(401);
    expectErrorBody(body, 'UNAUTHENTICATED', 'token algorithm not allowed');
  });

  it('never echoes the token in the error', async () => {
    const token = await sign({ aud: 'someone-else' });
    const { body } = await get(`${running.url}/me`, token);
    expect(JSON.stringify(body)).not.toContain(token.split('.')[1]);
  });

  it('answers 403 when the principal lacks a required scope, 200 when it has it', async () => {
    const denied = await get(`${running.url}/admin`, await sign({}));
    expect(denied.status).toBe(403);
    expect(Object.keys(denied.body)).toEqual(['error']);
    expect(denied.body['error']).toMatchObject({ code: 'PERMISSION_DENIED', message: 'missing required scope: admin', retryable: false });
    expect(JSON.stringify(denied.body)).not.toContain('stack');
    expect(await get(`${running.url}/admin`, await sign({ scope: 'admin' }))).toEqual({ status: 200, body: { admin: true } });
  });

  describe('origin checks on browser routes', () => {
    const post = async (headers: Record<string, string>) => {
      const response = await fetch(`${running.url}/browser`, { method: 'POST', headers: { authorization: `Bearer ${await sign({})}`, ...headers } });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    it('accepts an allowlisted origin, normalizing case and default port', async () => {
      expect(await post({ origin: ALLOWED_ORIGIN })).toEqual({ status: 200, body: { subject: 'alice' } });
      expect((await post({ origin: 'HTTPS://App.Example.com:443' })).status).toBe(200);
    });

    it('rejects a foreign origin with 403', async () => {
      const { status, body } = await post({ origin: 'https://evil.example.com' });
      expect(status).toBe(403);
      expectErrorBody(body, 'PERMISSION_DENIED', 'origin not allowed');
      expect((await post({ origin: 'https://app.example.com:8443' })).status).toBe(403);
      expect((await post({ origin: 'null' })).status).toBe(403);
    });

    it('rejects a state-changing browser request without Origin (CSRF)', async () => {
      const { status, body } = await post({});
      expect(status).toBe(403);
      expectErrorBody(body, 'PERMISSION_DENIED', 'origin required');
    });

    it('ignores Origin on non-browser routes', async () => {
      expect((await get(`${running.url}/me`, await sign({}), { origin: 'https://evil.example.com' })).status).toBe(200);
    });
  });
});

describe('auth over HTTP (JWKS file)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-jwks-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['RS256', 'ES256'] as const)('verifies %s tokens against public keys from a JWKS file', async (alg) => {
    const { publicKey, privateKey } = await generateKeyPair(alg);
    const other = await generateKeyPair(alg);
    const jwksFile = join(dir, `${alg}.json`);
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg, use: 'sig' }] }));
    const running = await start(new TokenVerifier({ issuer: ISSUER, audience: AUDIENCE, key: { jwksFile } }));
    try {
      const mint = (key: typeof privateKey) =>
        new SignJWT({ tenant: 'acme', scope: 'admin' })
          .setProtectedHeader({ alg, kid: 'k1' })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setSubject('svc')
          .setExpirationTime('5m')
          .sign(key);
      expect(await get(`${running.url}/admin`, await mint(privateKey))).toEqual({ status: 200, body: { admin: true } });
      const forged = await get(`${running.url}/admin`, await mint(other.privateKey));
      expect(forged.status).toBe(401);
      expectErrorBody(forged.body, 'UNAUTHENTICATED', 'token signature invalid');
      // An HS256 token must not be accepted by an asymmetric verifier (algorithm confusion).
      const hs = await get(`${running.url}/me`, await sign({}));
      expect(hs.status).toBe(401);
      expectErrorBody(hs.body, 'UNAUTHENTICATED', 'token algorithm not allowed');
    } finally {
      await running.app.close();
    }
  });
});

describe('auth over HTTP (development provider)', () => {
  it('accepts its own token and nothing else', async () => {
    const provider = await DevelopmentTokenProvider.create({ bindHost: '127.0.0.1' });
    const running = await start(provider.verifier);
    try {
      const { status, body } = await get(`${running.url}/admin`, await provider.mint());
      expect(status).toBe(200);
      expect(body).toEqual({ admin: true });
      expect(await get(`${running.url}/me`, await provider.mint())).toEqual({
        status: 200,
        body: { tenant: 'dev', subject: 'developer', scopes: ['admin', 'runtime', 'view', 'delegate', 'export', 'audit'] },
      });
      const stranger = await DevelopmentTokenProvider.create({ bindHost: '127.0.0.1' });
      expect((await get(`${running.url}/me`, await stranger.mint())).status).toBe(401);
    } finally {
      await running.app.close();
    }
  });
});

describe('view tokens over HTTP', () => {
  const viewTokens = new ViewTokens({ secret: Buffer.alloc(32, 3) });
  const grant = { tenant: 'acme', userId: 'alice', appName: 'dash', sessionId: 's1', incarnation: 1 };
  let running: Running;
  beforeAll(async () => {
    const verifier = new TokenVerifier({ issuer: ISSUER, audience: AUDIENCE, key: { secret: SECRET } });
    running = await start(AuthModule.forRoot(verifier, [], { viewTokens }));
  });
  afterAll(() => running.app.close());

  it('is verified into its restricted principal, beside the organisation tokens', async () => {
    const { token } = await viewTokens.mint(grant);
    expect(await get(`${running.url}/me`, token)).toEqual({
      status: 200,
      body: { tenant: 'acme', subject: 'alice', scopes: ['view'], restrictedTo: { appName: 'dash', sessionId: 's1', incarnation: 1 } },
    });
    expect((await get(`${running.url}/me`, await sign({}))).body).toEqual({ tenant: 'acme', subject: 'alice', scopes: ['runtime', 'view'] });
  });

  it('reaches its own session on a view route; any other session or app reads as 404', async () => {
    const { token } = await viewTokens.mint(grant);
    expect(await get(`${running.url}/sessions/s1/probe?appName=dash`, token)).toEqual({
      status: 200,
      body: { tenant: 'acme', appName: 'dash', userId: 'alice', sessionId: 's1' },
    });
    const other = await get(`${running.url}/sessions/s2/probe?appName=dash`, token);
    expect(other.status).toBe(404);
    expectErrorBody(other.body, 'NOT_FOUND', 'session not found');
    expect((await get(`${running.url}/sessions/s1/probe?appName=other`, token)).status).toBe(404);
  });

  it('cannot call runtime or admin routes (403)', async () => {
    const { token } = await viewTokens.mint(grant);
    const runtime = await get(`${running.url}/runtime`, token);
    expect(runtime.status).toBe(403);
    expect(runtime.body['error']).toMatchObject({ code: 'PERMISSION_DENIED', message: 'missing required scope: runtime' });
    expect((await get(`${running.url}/admin`, token)).status).toBe(403);
  });

  it('is 401 when expired, tampered with, or signed by another gateway key', async () => {
    const stale = new ViewTokens({ secret: Buffer.alloc(32, 3), now: () => Date.now() - 16 * 60_000 });
    const expired = await get(`${running.url}/me`, (await stale.mint(grant)).token);
    expect(expired.status).toBe(401);
    expectErrorBody(expired.body, 'UNAUTHENTICATED', 'token expired');

    const [header, payload, signature] = (await viewTokens.mint(grant)).token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const moved = Buffer.from(JSON.stringify({ ...claims, sid: 's2' })).toString('base64url');
    const tampered = await get(`${running.url}/sessions/s2/probe?appName=dash`, `${header}.${moved}.${signature}`);
    expect(tampered.status).toBe(401);
    expectErrorBody(tampered.body, 'UNAUTHENTICATED', 'token signature invalid');

    const foreign = await get(`${running.url}/me`, (await new ViewTokens().mint(grant)).token);
    expect(foreign.status).toBe(401);
    expectErrorBody(foreign.body, 'UNAUTHENTICATED', 'token signature invalid');
  });
});

describe("browser routes accept the gateway's own origin in development only", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-own-origin-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const post = async (url: string, token: string, origin: string) => {
    const response = await fetch(`${url}/browser`, { method: 'POST', headers: { authorization: `Bearer ${token}`, origin } });
    return response.status;
  };

  it('development: its own loopback origin at its port is allowed; another port or host is not', async () => {
    const tokenFile = join(dir, 'dev-token');
    const auth = await AuthModule.fromConfig({ mode: 'development', devTokenFile: tokenFile, originAllowlist: [] }, { bindHost: '127.0.0.1' });
    const running = await start(auth.module);
    try {
      const token = readFileSync(tokenFile, 'utf8').trim();
      const port = Number(new URL(running.url.replace('[::1]', '127.0.0.1')).port);
      expect(await post(running.url, token, `http://127.0.0.1:${port}`)).toBe(200);
      expect(await post(running.url, token, `http://localhost:${port}`)).toBe(200);
      expect(await post(running.url, token, `http://127.0.0.1:${port + 1}`)).toBe(403);
      expect(await post(running.url, token, `https://127.0.0.1:${port}`)).toBe(403);
      expect(await post(running.url, token, 'https://evil.example.com')).toBe(403);
      expect(await post(running.url, token, `http://evil.example.com:${port}`)).toBe(403);
    } finally {
      await running.app.close();
    }
  });

  it('jwt: only the allowlist counts', async () => {
    const auth = await AuthModule.fromConfig(
      {
        mode: 'jwt',
        issuer: ISSUER,
        audience: AUDIENCE,
        key: { kind: 'hs256-secret', secret: SECRET },
        algorithms: ['HS256'],
        clockToleranceSeconds: 5,
        tenantClaim: 'tenant',
        originAllowlist: [ALLOWED_ORIGIN],
      },
      { bindHost: '127.0.0.1' },
    );
    const running = await start(auth.module);
    try {
      const port = Number(new URL(running.url.replace('[::1]', '127.0.0.1')).port);
      const token = await sign({});
      expect(await post(running.url, token, ALLOWED_ORIGIN)).toBe(200);
      expect(await post(running.url, token, `http://127.0.0.1:${port}`)).toBe(403);
      expect(await post(running.url, token, `http://localhost:${port}`)).toBe(403);
    } finally {
      await running.app.close();
    }
  });
});
