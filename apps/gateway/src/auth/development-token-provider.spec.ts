import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { DevelopmentTokenProvider, isLoopbackHost } from './development-token-provider';

describe('isLoopbackHost', () => {
  it.each(['127.0.0.1', '127.10.20.30', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1'])('accepts %s', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each(['0.0.0.0', '::', '10.1.2.3', '128.0.0.1', 'example.com', 'localhost.example.com', '::ffff:10.0.0.1', '', '127.0.0.1.nip.io'])(
    'refuses %s',
    (host) => {
      expect(isLoopbackHost(host)).toBe(false);
    },
  );
});

describe('DevelopmentTokenProvider', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-dev-token-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['0.0.0.0', '10.1.2.3', 'example.com'])('refuses to start when binding %s', async (bindHost) => {
    await expect(DevelopmentTokenProvider.create({ bindHost })).rejects.toThrow(/development auth refused: .* not loopback/);
  });

  it.each(['127.0.0.1', '::1', 'localhost'])('starts when binding %s', async (bindHost) => {
    await expect(DevelopmentTokenProvider.create({ bindHost })).resolves.toBeInstanceOf(DevelopmentTokenProvider);
  });

  it('writes its token with mode 0600, creating the directory, and its verifier accepts it', async () => {
    const tokenFile = join(dir, 'nested', 'state', 'dev-token');
    const provider = await DevelopmentTokenProvider.create({ bindHost: '127.0.0.1', tokenFile, tenant: 't9', scopes: ['view'], ttlSeconds: 60 });
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    await expect(provider.verifier.verify(token)).resolves.toEqual({ tenant: 't9', subject: 'developer', scopes: ['view'] });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ iss: 'apphost-dev', aud: 'apphost' });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(60);
  });

  it('overwrites an existing token file and keeps it private', async () => {
    const tokenFile = join(dir, 'again');
    await DevelopmentTokenProvider.create({ bindHost: 'localhost', tokenFile });
    const second = await DevelopmentTokenProvider.create({ bindHost: 'localhost', tokenFile });
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    await expect(second.verifier.verify(readFileSync(tokenFile, 'utf8').trim())).resolves.toMatchObject({ tenant: 'dev' });
  });

  it('does not accept tokens from another process-lifetime key', async () => {
    const a = await DevelopmentTokenProvider.create({ bindHost: '127.0.0.1' });
    const b = await DevelopmentTokenProvider.create({ bindHost: '127.0.0.1' });
    await expect(a.verifier.verify(await b.mint())).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: 'token signature invalid' });
  });

  it('refuses an invalid principal', async () => {
    await expect(DevelopmentTokenProvider.create({ bindHost: '127.0.0.1', tenant: 'has.dots' })).rejects.toThrow('invalid principal');
  });
});
