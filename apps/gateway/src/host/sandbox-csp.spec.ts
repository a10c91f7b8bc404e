import { buildViewCsp } from '@apphost/policy';
import { sandboxCspOf } from './sandbox-csp';

const dev = { development: true };
const prod = { development: false };

describe('sandboxCspOf', () => {
  it('serves the spec default when the View declared nothing', () => {
    expect(sandboxCspOf(undefined, prod)).toBe(buildViewCsp(undefined, prod).header);
    expect(sandboxCspOf(undefined, prod)).toContain("connect-src 'none'");
  });

  it('serves exactly what the builder produced for a declaration', () => {
    const built = buildViewCsp(
      {
        connectDomains: ['https://api.example.com', 'wss://live.example.com'],
        resourceDomains: ['https://cdn.example.com'],
        frameDomains: ['https://embed.example.com'],
      },
      prod,
    ).header;
    expect(sandboxCspOf(built, prod)).toBe(built);
  });

  it('accepts loopback origins only in development', () => {
    const built = buildViewCsp({ connectDomains: ['http://127.0.0.1:9999'] }, dev).header;
    expect(sandboxCspOf(built, dev)).toBe(built);
    expect(sandboxCspOf(built, prod)).toBeUndefined();
  });

  it.each([
    ['a wildcard source', (h: string) => h.replace("connect-src 'none'", 'connect-src *')],
    ['a keyword added', (h: string) => h.replace("connect-src 'none'", "connect-src 'self'")],
    ['a scheme source', (h: string) => h.replace("frame-src 'none'", 'frame-src https:')],
    ['an unsafe-eval', (h: string) => h.replace("script-src 'self' 'unsafe-inline' data:", "script-src 'self' 'unsafe-inline' data: 'unsafe-eval'")],
    ['a directive dropped', (h: string) => h.replace("; object-src 'none'", '')],
    ['a directive added', (h: string) => `${h}; sandbox allow-top-navigation`],
    ['a directive repeated', (h: string) => `${h}; connect-src https://evil.example.com`],
    ['an origin in a directive other than its field', (h: string) => h.replace("img-src 'self'", "img-src 'self' https://evil.example.com")],
  ])('refuses a header with %s', (_what, widen) => {
    const base = buildViewCsp(undefined, prod).header;
    const widened = widen(base);
    expect(widened).not.toBe(base);
    expect(sandboxCspOf(widened, prod)).toBeUndefined();
  });

  it('refuses an oversized header', () => {
    expect(sandboxCspOf(`default-src 'none'; connect-src ${'https://a.example.com '.repeat(1000)}`, prod)).toBeUndefined();
  });
});
