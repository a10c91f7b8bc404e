import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { AppHostError } from '@apphost/contracts';
import { parseAuthConfig } from './auth.config';
import { TokenVerifier } from './token-verifier';

const SECRET = 'unit-test-secret-with-at-least-32-bytes!';
const verifier = new TokenVerifier({ issuer: 'iss', audience: 'aud', key: { secret: SECRET }, tenantClaim: 'org' });

const sign = (payload: JWTPayload) =>
  new SignJWT({ iss: 'iss', aud: 'aud', sub: 'bob', org: 't1', exp: Math.floor(Date.now() / 1000) + 60, ...payload })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(SECRET));

async function failure(token: string): Promise<AppHostError> {
  const error = await verifier.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppHostError);
  expect((error as AppHostError).code).toBe('UNAUTHENTICATED');
  return error as AppHostError;
}

describe('TokenVerifier', () => {
  it('maps claims to a principal using the configured tenant claim', async () => {
    await expect(verifier.verify(await sign({ scope: 'a b a' }))).resolves.toEqual({ tenant: 't1', subject: 'bob', scopes: ['a', 'b'] });
    await expect(verifier.verify(await sign({}))).resolves.toEqual({ tenant: 't1', subject: 'bob', scopes: [] });
  });

  it('tolerates small clock skew on exp', async () => {
    await expect(verifier.verify(await sign({ exp: Math.floor(Date.now() / 1000) - 2 }))).resolves.toMatchObject({ subject: 'bob' });
  });

  it.each([
    ['no exp', { exp: undefined }, 'token missing exp claim'],
    ['no sub', { sub: undefined }, 'token missing sub claim'],
    ['no tenant', { org: undefined }, 'token missing tenant claim'],
    ['a tenant with subject separators', { org: 'a.b' }, 'token tenant claim invalid'],
    ['a numeric scope claim', { scope: 42 }, 'token scope claim invalid'],
    ['a future nbf', { nbf: Math.floor(Date.now() / 1000) + 600 }, 'token not yet valid'],
  ])('rejects a token with %s', async (_name, payload, message) => {
    expect((await failure(await sign(payload))).message).toBe(message);
  });

  it('rejects malformed and oversized input without echoing it', async () => {
    const error = await failure('abc.def.ghi');
    expect(error.message).toBe('token malformed');
    expect(error.message).not.toContain('abc');
    expect((await failure('a'.repeat(20_000))).message).toBe('token malformed');
  });

  it('refuses unsafe construction', () => {
    expect(() => new TokenVerifier({ issuer: 'i', audience: 'a', key: { secret: 'short' } })).toThrow('at least 32 bytes');
    expect(() => new TokenVerifier({ issuer: 'i', audience: 'a', key: { secret: SECRET }, algorithms: ['none'] })).toThrow('algorithms');
    expect(() => new TokenVerifier({ issuer: 'i', audience: 'a', key: { secret: SECRET }, algorithms: ['RS256'] })).toThrow('algorithms');
  });

  describe('JWKS files', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'gateway-verifier-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('is built from config and reads the file once, at construction', async () => {
      const { publicKey, privateKey } = await generateKeyPair('ES256');
      const path = join(dir, 'jwks.json');
      writeFileSync(path, JSON.stringify({ keys: [await exportJWK(publicKey)] }));
      const config = parseAuthConfig({ AUTH_MODE: 'jwt', AUTH_JWT_ISSUER: 'iss', AUTH_JWT_AUDIENCE: 'aud', AUTH_JWKS_FILE: path });
      if (config.mode !== 'jwt') throw new Error('expected jwt config');
      const fromConfig = TokenVerifier.fromConfig(config);
      rmSync(path);
      const token = await new SignJWT({ tenant: 't', scp: ['x'] })
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer('iss')
        .setAudience('aud')
        .setSubject('s')
        .setExpirationTime('1m')
        .sign(privateKey);
      await expect(fromConfig.verify(token)).resolves.toEqual({ tenant: 't', subject: 's', scopes: ['x'] });
    });

    it('refuses a missing file, an empty set, and private keys', async () => {
      const make = (jwksFile: string) => () => new TokenVerifier({ issuer: 'i', audience: 'a', key: { jwksFile } });
      expect(make(join(dir, 'absent.json'))).toThrow('AUTH_JWKS_FILE: cannot read JWKS');
      writeFileSync(join(dir, 'empty.json'), '{"keys":[]}');
      expect(make(join(dir, 'empty.json'))).toThrow('at least one key');
      const { privateKey } = await generateKeyPair('RS256', { extractable: true });
      writeFileSync(join(dir, 'private.json'), JSON.stringify({ keys: [await exportJWK(privateKey)] }));
      expect(make(join(dir, 'private.json'))).toThrow('private key');
      writeFileSync(join(dir, 'oct.json'), JSON.stringify({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }));
      expect(make(join(dir, 'oct.json'))).toThrow('public keys');
    });
  });
});
