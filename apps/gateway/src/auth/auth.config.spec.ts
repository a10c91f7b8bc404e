import { parseAuthConfig, parseAuthSettings } from './auth.config';

const SECRET = 'x'.repeat(32);
const jwtEnv = (extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv => ({
  AUTH_MODE: 'jwt',
  AUTH_JWT_ISSUER: 'https://issuer.test',
  AUTH_JWT_AUDIENCE: 'apphost',
  AUTH_JWT_HS256_SECRET: SECRET,
  ...extra,
});

describe('parseAuthConfig', () => {
  it('parses a secret-based jwt config with defaults', () => {
    expect(parseAuthConfig(jwtEnv())).toEqual({
      mode: 'jwt',
      issuer: 'https://issuer.test',
      audience: 'apphost',
      key: { kind: 'hs256-secret', secret: SECRET },
      algorithms: ['HS256'],
      clockToleranceSeconds: 5,
      tenantClaim: 'tenant',
      originAllowlist: [],
    });
  });

  it('parses a JWKS config, its default algorithms and the normalized origin allowlist', () => {
    const config = parseAuthConfig(
      jwtEnv({
        AUTH_JWT_HS256_SECRET: undefined,
        AUTH_JWKS_FILE: '/etc/apphost/jwks.json',
        AUTH_CLOCK_TOLERANCE_SECONDS: '10',
        AUTH_TENANT_CLAIM: 'https://apphost.dev/tenant',
        AUTH_ORIGIN_ALLOWLIST: 'https://App.Example.com:443, http://localhost:5173',
      }),
    );
    expect(config).toMatchObject({
      key: { kind: 'jwks-file', path: '/etc/apphost/jwks.json' },
      algorithms: ['RS256', 'ES256'],
      clockToleranceSeconds: 10,
      tenantClaim: 'https://apphost.dev/tenant',
      originAllowlist: ['https://app.example.com', 'http://localhost:5173'],
    });
  });

  it('parses development mode', () => {
    expect(parseAuthConfig({ AUTH_MODE: 'development', AUTH_DEV_TOKEN_FILE: '/tmp/t' })).toEqual({
      mode: 'development',
      devTokenFile: '/tmp/t',
      originAllowlist: [],
    });
  });

  it.each([
    ['a missing mode', { AUTH_MODE: undefined }, 'AUTH_MODE'],
    ['an unknown mode', { AUTH_MODE: 'open' }, 'AUTH_MODE'],
    ['a missing issuer', { AUTH_JWT_ISSUER: undefined }, 'AUTH_JWT_ISSUER: required'],
    ['an empty audience', { AUTH_JWT_AUDIENCE: '' }, 'AUTH_JWT_AUDIENCE: required'],
    ['both secret and JWKS', { AUTH_JWKS_FILE: '/jwks.json' }, 'AUTH_JWT_HS256_SECRET: set exactly one of AUTH_JWT_HS256_SECRET or AUTH_JWKS_FILE, not both'],
    ['neither secret nor JWKS', { AUTH_JWT_HS256_SECRET: undefined }, 'AUTH_JWT_HS256_SECRET: set exactly one'],
    ['a short secret', { AUTH_JWT_HS256_SECRET: 'x'.repeat(31) }, 'AUTH_JWT_HS256_SECRET: must be at least 32 bytes'],
    ['alg none', { AUTH_JWT_ALGORITHMS: 'HS256,none' }, 'AUTH_JWT_ALGORITHMS: invalid algorithm list ("none" is never allowed)'],
    ['an asymmetric algorithm with a secret', { AUTH_JWT_ALGORITHMS: 'RS256' }, 'AUTH_JWT_ALGORITHMS'],
    ['a bad clock tolerance', { AUTH_CLOCK_TOLERANCE_SECONDS: 'soon' }, 'AUTH_CLOCK_TOLERANCE_SECONDS'],
    ['an origin with a path', { AUTH_ORIGIN_ALLOWLIST: 'https://ok.example,https://x.example/app' }, 'AUTH_ORIGIN_ALLOWLIST'],
  ])('rejects %s, naming the variable', (_name, extra, expected) => {
    expect(() => parseAuthConfig(jwtEnv(extra))).toThrow(expected);
  });

  it('lists every bad variable at once and never echoes the secret', () => {
    const short = 'short-secret-value';
    let message = '';
    try {
      parseAuthConfig({ AUTH_MODE: 'jwt', AUTH_JWT_HS256_SECRET: short });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('AUTH_JWT_ISSUER');
    expect(message).toContain('AUTH_JWT_AUDIENCE');
    expect(message).toContain('AUTH_JWT_HS256_SECRET');
    expect(message).not.toContain(short);
  });

  it('measures the secret in bytes, not characters', () => {
    expect(() => parseAuthConfig(jwtEnv({ AUTH_JWT_HS256_SECRET: 'é'.repeat(16) }))).not.toThrow();
    expect(() => parseAuthConfig(jwtEnv({ AUTH_JWT_HS256_SECRET: 'é'.repeat(15) + 'x' }))).toThrow('AUTH_JWT_HS256_SECRET');
  });

  describe('GATEWAY_VIEW_TOKEN_SECRET', () => {
    const secret = Buffer.alloc(32, 9);

    it('is absent when unset (a per-process key is used) in either mode', () => {
      expect(parseAuthSettings(jwtEnv()).viewTokenSecret).toBeUndefined();
      expect(parseAuthSettings({ AUTH_MODE: 'development', GATEWAY_VIEW_TOKEN_SECRET: '' }).viewTokenSecret).toBeUndefined();
    });

    it('decodes base64 (standard or URL-safe) of at least 32 bytes', () => {
      expect(parseAuthSettings(jwtEnv({ GATEWAY_VIEW_TOKEN_SECRET: secret.toString('base64') })).viewTokenSecret).toEqual(secret);
      const urlSafe = Buffer.alloc(48, 0xfb);
      expect(parseAuthSettings({ AUTH_MODE: 'development', GATEWAY_VIEW_TOKEN_SECRET: urlSafe.toString('base64url') }).viewTokenSecret).toEqual(urlSafe);
    });

    it.each([
      ['too short', Buffer.alloc(31, 1).toString('base64'), 'GATEWAY_VIEW_TOKEN_SECRET: must decode to at least 32 bytes'],
      ['not base64', 'not base64 at all, but long enough to be 32 bytes!', 'GATEWAY_VIEW_TOKEN_SECRET: must be base64'],
    ])('refuses a secret %s, naming it and never echoing it', (_name, value, expected) => {
      let message = '';
      try {
        parseAuthSettings(jwtEnv({ GATEWAY_VIEW_TOKEN_SECRET: value }));
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain(expected);
      expect(message).not.toContain(value);
    });

    it('is listed together with the auth problems', () => {
      expect(() => parseAuthSettings({ AUTH_MODE: 'open', GATEWAY_VIEW_TOKEN_SECRET: 'short' })).toThrow(/AUTH_MODE[\s\S]*GATEWAY_VIEW_TOKEN_SECRET/);
    });
  });
});
