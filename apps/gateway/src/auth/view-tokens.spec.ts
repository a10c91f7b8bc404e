import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { AppHostError } from '@apphost/contracts';
import { DevelopmentTokenProvider } from './development-token-provider';
import { VIEW_TOKEN_AUDIENCE, VIEW_TOKEN_ISSUER, VIEW_TOKEN_TYPE, ViewTokens } from './view-tokens';

const SECRET = Buffer.alloc(32, 7);
const grant = { tenant: 'acme', userId: 'alice', appName: 'dash', sessionId: 's1', incarnation: 1 };
const restricted = { tenant: 'acme', subject: 'alice', scopes: ['view'], restrictedTo: { appName: 'dash', sessionId: 's1', incarnation: 1 } };

async function unauthenticated(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppHostError);
  expect((error as AppHostError).code).toBe('UNAUTHENTICATED');
  return (error as AppHostError).message;
}

/** A token with the view-token header and claims, signed with `secret`, but with the given claims changed. */
function forge(claims: Record<string, unknown>, secret: Uint8Array = SECRET): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    iss: VIEW_TOKEN_ISSUER,
    aud: VIEW_TOKEN_AUDIENCE,
    sub: 'alice',
    tenant: 'acme',
    scope: 'view',
    app: 'dash',
    sid: 's1',
    inc: 1,
    jti: 'j',
    iat: now,
    exp: now + 60,
  };
  return new SignJWT({ ...payload, ...claims }).setProtectedHeader({ alg: 'HS256', typ: VIEW_TOKEN_TYPE }).sign(secret);
}

describe('ViewTokens', () => {
  const tokens = new ViewTokens({ secret: SECRET });

  it('mints a short-lived HS256 token of its own issuer, audience and type, and verifies it into the restricted principal', async () => {
    const before = Date.now();
    const minted = await tokens.mint(grant);
    expect(minted.principal).toEqual(restricted);
    expect(decodeProtectedHeader(minted.token)).toEqual({ alg: 'HS256', typ: 'apphost-view+jwt' });
    const claims = decodeJwt(minted.token);
    expect(claims).toMatchObject({ iss: 'apphost-gateway', aud: 'apphost-view', sub: 'alice', tenant: 'acme', scope: 'view', app: 'dash', sid: 's1', inc: 1 });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(300);
    expect(Date.parse(minted.expiresAt)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 300_000);
    await expect(tokens.verify(minted.token)).resolves.toEqual(restricted);
    expect(ViewTokens.isViewToken(minted.token)).toBe(true);
  });

  it('accepts a lifetime up to 15 minutes, and refuses anything else', async () => {
    const minted = await tokens.mint(grant, 900);
    const claims = decodeJwt(minted.token);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(900);
    for (const ttl of [0, 901, 1.5, -1]) await expect(tokens.mint(grant, ttl)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('refuses an expired token', async () => {
    const twentyMinutesAgo = new ViewTokens({ secret: SECRET, now: () => Date.now() - 20 * 60_000 });
    expect(await unauthenticated(tokens.verify((await twentyMinutesAgo.mint(grant)).token))).toBe('token expired');
  });

  it('refuses a tampered token (another session, another scope) and one of another key', async () => {
    const { token } = await tokens.mint(grant);
    const [header, , signature] = token.split('.');
    for (const change of [{ sid: 's2' }, { scope: 'view runtime' }, { sub: 'bob' }]) {
      const payload = Buffer.from(JSON.stringify({ ...decodeJwt(token), ...change })).toString('base64url');
      expect(await unauthenticated(tokens.verify(`${header}.${payload}.${signature}`))).toBe('token signature invalid');
    }
    const stranger = new ViewTokens();
    expect(stranger.ephemeral).toBe(true);
    expect(tokens.ephemeral).toBe(false);
    expect(await unauthenticated(stranger.verify(token))).toBe('token signature invalid');
  });

  it('accepts only the exact shape it mints, even under its own key: scope view alone, one session incarnation, at most 15 minutes', async () => {
    await expect(tokens.verify(await forge({}))).resolves.toEqual(restricted);
    const now = Math.floor(Date.now() / 1000);
    for (const claims of [
      { scope: 'view runtime' },
      { scope: 'admin' },
      { sid: undefined },
      // A token that names no incarnation (or a malformed one) would reach whatever session next bears this id.
      { inc: undefined },
      { inc: 0 },
      { inc: '1' },
      { inc: 1.5 },
      { app: 'has space' },
      { tenant: undefined },
      { iat: now - 3600, exp: now + 60 },
    ]) {
      expect(await unauthenticated(tokens.verify(await forge(claims)))).toBe('token invalid');
    }
  });

  it('never takes an organisation or development token for a view token', async () => {
    const dev = await DevelopmentTokenProvider.create({ bindHost: '127.0.0.1' });
    const devToken = await dev.mint();
    expect(ViewTokens.isViewToken(devToken)).toBe(false);
    expect(await unauthenticated(tokens.verify(devToken))).toBe('token malformed');
    // The view-token type under another issuer or audience is still refused.
    expect(await unauthenticated(tokens.verify(await forge({ iss: 'https://issuer.test' })))).toBe('token invalid');
    expect(await unauthenticated(tokens.verify(await forge({ aud: 'apphost' })))).toBe('token invalid');
    // And a view token is refused by the organisation-style development verifier.
    expect(await unauthenticated(dev.verifier.verify((await tokens.mint(grant)).token))).toBe('token signature invalid');
  });

  it('refuses garbage without echoing it, and a short secret at construction', async () => {
    expect(ViewTokens.isViewToken('not.a.jwt')).toBe(false);
    expect(await unauthenticated(tokens.verify('not.a.jwt'))).toBe('token malformed');
    expect(await unauthenticated(tokens.verify('x'.repeat(20_000)))).toBe('token malformed');
    expect(() => new ViewTokens({ secret: Buffer.alloc(31) })).toThrow('at least 32 bytes');
  });
});
