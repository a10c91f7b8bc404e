import fc from 'fast-check';
import { cspRejectionSchema, type CspRejection } from '@apphost/contracts';
import { buildViewCsp, classifyCspSource, CSP_FIELDS } from './csp';

const PRODUCTION = { development: false };
const DEVELOPMENT = { development: true };

const SPEC_DEFAULT_DIRECTIVES = {
  'default-src': ["'none'"],
  'script-src': ["'self'", "'unsafe-inline'", 'data:'],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:', 'blob:'],
  'font-src': ["'self'", 'data:', 'blob:'],
  'media-src': ["'self'", 'data:', 'blob:'],
  'worker-src': ["'self'", 'blob:'],
  'connect-src': ["'none'"],
  'frame-src': ["'none'"],
  'object-src': ["'none'"],
  'form-action': ["'none'"],
  'base-uri': ["'self'"],
};
const DIRECTIVE_NAMES = Object.keys(SPEC_DEFAULT_DIRECTIVES);

function directives(header: string): Record<string, string[]> {
  return Object.fromEntries(
    header.split('; ').map((directive) => {
      const [name, ...sources] = directive.split(' ');
      return [name, sources];
    }),
  );
}

describe('buildViewCsp', () => {
  it('gives the MCP Apps default (plus blob:/data: scheme sources) when nothing is declared', () => {
    const expected =
      "default-src 'none'; script-src 'self' 'unsafe-inline' data:; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
      "font-src 'self' data: blob:; media-src 'self' data: blob:; worker-src 'self' blob:; connect-src 'none'; frame-src 'none'; " +
      "object-src 'none'; form-action 'none'; base-uri 'self'";
    for (const declared of [undefined, null, {}, 'x', 7, [], { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }]) {
      expect(buildViewCsp(declared, PRODUCTION)).toEqual({ header: expected, rejected: [] });
    }
    expect(directives(expected)).toEqual(SPEC_DEFAULT_DIRECTIVES);
  });

  it('puts each field only into its directives', () => {
    const { header, rejected } = buildViewCsp(
      {
        connectDomains: ['https://api.example.com', 'wss://live.example.com'],
        resourceDomains: ['https://cdn.example.com'],
        frameDomains: ['https://www.youtube.com'],
        baseUriDomains: ['https://base.example.com'],
      },
      PRODUCTION,
    );
    expect(rejected).toEqual([]);
    const res = 'https://cdn.example.com';
    expect(directives(header)).toEqual({
      ...SPEC_DEFAULT_DIRECTIVES,
      'script-src': ["'self'", "'unsafe-inline'", 'data:', res],
      'style-src': ["'self'", "'unsafe-inline'", res],
      'img-src': ["'self'", 'data:', 'blob:', res],
      'font-src': ["'self'", 'data:', 'blob:', res],
      'media-src': ["'self'", 'data:', 'blob:', res],
      'connect-src': ['https://api.example.com', 'wss://live.example.com'],
      'frame-src': ['https://www.youtube.com'],
      'base-uri': ['https://base.example.com'],
    });
  });

  it('normalizes, deduplicates and sorts sources, independent of declaration order', () => {
    const a = buildViewCsp(
      { connectDomains: ['https://B.example.com:443', 'https://a.example.com/', 'HTTPS://b.example.com', 'https://a.example.com:8443'] },
      PRODUCTION,
    );
    const b = buildViewCsp({ connectDomains: ['https://a.example.com:8443', 'https://b.example.com', 'https://a.example.com'] }, PRODUCTION);
    expect(a).toEqual(b);
    expect(directives(a.header)['connect-src']).toEqual(['https://a.example.com', 'https://a.example.com:8443', 'https://b.example.com']);
  });

  it('lists every dropped entry with its field and reason, in field then declaration order, deduplicated', () => {
    const { header, rejected } = buildViewCsp(
      {
        baseUriDomains: ['*'],
        connectDomains: ['*', 'https://ok.example.com', 42, '*', "'self'"],
        resourceDomains: 'https://cdn.example.com',
        frameDomains: ['http://example.com'],
      },
      PRODUCTION,
    );
    expect(rejected).toEqual<CspRejection[]>([
      { field: 'connectDomains', value: '*', reason: 'WILDCARD' },
      { field: 'connectDomains', value: '42', reason: 'NOT_A_STRING' },
      { field: 'connectDomains', value: "'self'", reason: 'KEYWORD' },
      { field: 'resourceDomains', value: 'https://cdn.example.com', reason: 'NOT_A_LIST' },
      { field: 'frameDomains', value: 'http://example.com', reason: 'SCHEME_NOT_ALLOWED' },
      { field: 'baseUriDomains', value: '*', reason: 'WILDCARD' },
    ]);
    for (const rejection of rejected) expect(cspRejectionSchema.parse(rejection)).toEqual(rejection);
    expect(directives(header)).toEqual({ ...SPEC_DEFAULT_DIRECTIVES, 'connect-src': ['https://ok.example.com'] });
  });

  it('bounds the echoed value of a rejection and describes non-strings', () => {
    const long = `https://${'a'.repeat(5000)}.example.com`;
    const { rejected } = buildViewCsp({ connectDomains: [long, null, { a: 1 }, ['x'], true] }, PRODUCTION);
    expect(rejected.map((r) => [r.value.length <= 2048, r.reason])).toEqual([
      [true, 'NOT_AN_ORIGIN'],
      [true, 'NOT_A_STRING'],
      [true, 'NOT_A_STRING'],
      [true, 'NOT_A_STRING'],
      [true, 'NOT_A_STRING'],
    ]);
    expect(rejected.map((r) => r.value).slice(1)).toEqual(['null', '[object]', '[array]', 'true']);
    expect(rejected[0].value).toBe(long.slice(0, 2048));
  });

  it('accepts loopback http/ws only in development', () => {
    const declared = { connectDomains: ['http://localhost:3000', 'ws://127.0.0.1:8080'], resourceDomains: ['http://localhost:5173'] };
    const dev = buildViewCsp(declared, DEVELOPMENT);
    expect(dev.rejected).toEqual([]);
    expect(directives(dev.header)['connect-src']).toEqual(['http://localhost:3000', 'ws://127.0.0.1:8080']);
    expect(directives(dev.header)['script-src']).toEqual(["'self'", "'unsafe-inline'", 'data:', 'http://localhost:5173']);
    const prod = buildViewCsp(declared, PRODUCTION);
    expect(prod.rejected.map((r) => r.reason)).toEqual(['SCHEME_NOT_ALLOWED', 'SCHEME_NOT_ALLOWED', 'SCHEME_NOT_ALLOWED']);
    expect(directives(prod.header)).toEqual(SPEC_DEFAULT_DIRECTIVES);
  });

  it('ignores members the spec does not define (nothing but the four fields can change the header)', () => {
    const declared = { wasmUnsafeEval: true, redirectDomains: ['https://x.example.com'], scriptSrc: ["'unsafe-eval'"], 'script-src': ['*'] };
    expect(buildViewCsp(declared, DEVELOPMENT)).toEqual(buildViewCsp(undefined, DEVELOPMENT));
  });
});

describe('classifyCspSource', () => {
  type Row = [field: (typeof CSP_FIELDS)[number], entry: unknown, development: boolean, expected: string];
  const rows: Row[] = [
    // accepted
    ['connectDomains', 'https://api.example.com', false, 'https://api.example.com'],
    ['connectDomains', 'https://API.Example.COM', false, 'https://api.example.com'],
    ['connectDomains', 'https://api.example.com/', false, 'https://api.example.com'],
    ['connectDomains', 'https://api.example.com:443', false, 'https://api.example.com'],
    ['connectDomains', 'https://api.example.com:8443', false, 'https://api.example.com:8443'],
    ['connectDomains', 'https://api.example.com:8443/', false, 'https://api.example.com:8443'],
    ['connectDomains', 'wss://live.example.com', false, 'wss://live.example.com'],
    ['connectDomains', 'wss://live.example.com:443', false, 'wss://live.example.com'],
    ['connectDomains', 'wss://*.live.example.com', false, 'wss://*.live.example.com'],
    ['resourceDomains', 'https://*.cloudflare.com', false, 'https://*.cloudflare.com'],
    ['resourceDomains', 'https://xn--bcher-kva.example', false, 'https://xn--bcher-kva.example'],
    ['resourceDomains', 'https://203.0.113.7', false, 'https://203.0.113.7'],
    ['resourceDomains', 'https://intranet', false, 'https://intranet'],
    ['frameDomains', 'https://www.youtube.com', false, 'https://www.youtube.com'],
    ['baseUriDomains', 'https://cdn.example.com', false, 'https://cdn.example.com'],
    ['connectDomains', 'http://localhost', true, 'http://localhost'],
    ['connectDomains', 'http://localhost:3000', true, 'http://localhost:3000'],
    ['connectDomains', 'http://LOCALHOST:80', true, 'http://localhost'],
    ['connectDomains', 'http://127.0.0.1:8080', true, 'http://127.0.0.1:8080'],
    ['connectDomains', 'ws://localhost:8080', true, 'ws://localhost:8080'],
    ['connectDomains', 'ws://127.0.0.1', true, 'ws://127.0.0.1'],
    ['resourceDomains', 'http://localhost:5173', true, 'http://localhost:5173'],
    ['frameDomains', 'http://127.0.0.1:4000', true, 'http://127.0.0.1:4000'],
    ['baseUriDomains', 'http://localhost:4000', true, 'http://localhost:4000'],
    // WILDCARD
    ['connectDomains', '*', false, 'WILDCARD'],
    ['connectDomains', '*', true, 'WILDCARD'],
    ['connectDomains', 'https://*', false, 'WILDCARD'],
    ['connectDomains', 'https://*.com', false, 'WILDCARD'],
    ['connectDomains', 'https://*.*.example.com', false, 'WILDCARD'],
    ['connectDomains', 'https://a.*.example.com', false, 'WILDCARD'],
    ['connectDomains', 'https://api*.example.com', false, 'WILDCARD'],
    ['connectDomains', 'https://example.com:*', false, 'WILDCARD'],
    ['connectDomains', 'https://*.1.2.3.4', false, 'WILDCARD'],
    // SCHEME_ONLY
    ['connectDomains', 'https:', false, 'SCHEME_ONLY'],
    ['connectDomains', 'wss:', false, 'SCHEME_ONLY'],
    ['resourceDomains', 'data:', false, 'SCHEME_ONLY'],
    ['resourceDomains', 'blob:', false, 'SCHEME_ONLY'],
    ['resourceDomains', 'HTTP:', true, 'SCHEME_ONLY'],
    // KEYWORD
    ['resourceDomains', "'self'", false, 'KEYWORD'],
    ['resourceDomains', "'unsafe-eval'", false, 'KEYWORD'],
    ['resourceDomains', "'unsafe-inline'", false, 'KEYWORD'],
    ['resourceDomains', "'wasm-unsafe-eval'", false, 'KEYWORD'],
    ['resourceDomains', "'strict-dynamic'", false, 'KEYWORD'],
    ['resourceDomains', "'none'", false, 'KEYWORD'],
    ['resourceDomains', "'nonce-abc123'", false, 'KEYWORD'],
    ['resourceDomains', "'sha256-AAAA+/='", false, 'KEYWORD'],
    ['resourceDomains', "''", false, 'KEYWORD'],
    // ILLEGAL_CHARACTERS
    ['resourceDomains', "https://a.example.com 'unsafe-eval'", false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', 'https://a.example.com; script-src *', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', 'https://a.example.com;', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', 'https://a.example.com,https://b.example.com', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', 'https://a.example.com\nscript-src *', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', 'https://a.example.com\r', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', 'https://a.example.com\t', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', ' https://a.example.com', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', 'https://a.example.com\u00a0', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', 'https://a.example.com\u2028', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', 'https://a.example.com\u0000', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', 'https://a.example.com\u007f', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', '"https://a.example.com"', false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', "https://a.example.com'", false, 'ILLEGAL_CHARACTERS'],
    ['resourceDomains', "'self' 'unsafe-eval'", false, 'ILLEGAL_CHARACTERS'],
    // NOT_AN_ORIGIN
    ['connectDomains', '', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'example.com', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', '*.example.com', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'self', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', '/api', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'javascript:alert(1)', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https:///x', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com/v1', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com//', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com?x=1', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com/?x=1', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com#x', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://user@api.example.com', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com\\@evil.example', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api%2eexample.com', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com:', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com:0', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com:65536', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com:0443', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com:x', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com:1:2', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api.example.com.', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api..example.com', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://-api.example.com', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://api_x.example.com', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://bücher.example', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://[::1]', true, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://999.1.1.1', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', 'https://1.2.3', false, 'NOT_AN_ORIGIN'],
    ['connectDomains', `https://${'a'.repeat(64)}.example.com`, false, 'NOT_AN_ORIGIN'],
    // SCHEME_NOT_ALLOWED
    ['connectDomains', 'http://api.example.com', false, 'SCHEME_NOT_ALLOWED'],
    ['connectDomains', 'http://api.example.com', true, 'SCHEME_NOT_ALLOWED'],
    ['connectDomains', 'ws://live.example.com', true, 'SCHEME_NOT_ALLOWED'],
    ['connectDomains', 'http://localhost:3000', false, 'SCHEME_NOT_ALLOWED'],
    ['connectDomains', 'ws://localhost:3000', false, 'SCHEME_NOT_ALLOWED'],
    ['connectDomains', 'http://*.localhost', true, 'WILDCARD'],
    ['connectDomains', 'http://*.app.localhost', true, 'SCHEME_NOT_ALLOWED'],
    ['connectDomains', 'http://127.0.0.2', true, 'SCHEME_NOT_ALLOWED'],
    ['connectDomains', 'ftp://files.example.com', false, 'SCHEME_NOT_ALLOWED'],
    ['connectDomains', 'data://x', false, 'SCHEME_NOT_ALLOWED'],
    ['resourceDomains', 'wss://live.example.com', false, 'SCHEME_NOT_ALLOWED'],
    ['resourceDomains', 'ws://localhost:8080', true, 'SCHEME_NOT_ALLOWED'],
    ['frameDomains', 'wss://live.example.com', false, 'SCHEME_NOT_ALLOWED'],
    ['baseUriDomains', 'wss://live.example.com', false, 'SCHEME_NOT_ALLOWED'],
    // NOT_A_STRING
    ['connectDomains', 42, false, 'NOT_A_STRING'],
    ['connectDomains', null, false, 'NOT_A_STRING'],
    ['connectDomains', undefined, false, 'NOT_A_STRING'],
    ['connectDomains', { origin: 'https://a.example.com' }, false, 'NOT_A_STRING'],
    ['connectDomains', ['https://a.example.com'], false, 'NOT_A_STRING'],
  ];

  it.each(rows)('%s %j (development %s) → %s', (field, entry, development, expected) => {
    const verdict = classifyCspSource(field, entry, { development });
    expect(verdict).toEqual(expected.includes('://') ? { ok: true, source: expected } : { ok: false, reason: expected });
  });
});

describe('buildViewCsp against injection', () => {
  const ORIGIN_SOURCE = /^(https|wss|http|ws):\/\/(\*\.)?[a-z0-9.-]+(:[0-9]{1,5})?$/;
  const hostile = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.constantFrom('*', "'unsafe-eval'", "'self'", 'https:', 'data:', "https://a.example.com 'unsafe-eval'", 'https://a.example.com; script-src *'),
    fc
      .tuple(fc.constantFrom('https://', 'wss://', 'http://', 'ws://', ''), fc.string(), fc.constantFrom('', ';', ' ', "'", ',', '\n', '/', ':*'))
      .map(([scheme, middle, tail]) => `${scheme}${middle}${tail}`),
    fc.anything(),
  );
  const declaredCsp = fc.record(
    { connectDomains: fc.array(hostile), resourceDomains: fc.array(hostile), frameDomains: fc.array(hostile), baseUriDomains: fc.array(hostile) },
    { requiredKeys: [] },
  );

  it('never adds a directive, a keyword, a wildcard origin or a scheme source; every entry is either a source or a rejection', () => {
    fc.assert(
      fc.property(declaredCsp, fc.boolean(), (declared, development) => {
        const { header, rejected } = buildViewCsp(declared, { development });
        const parsed = directives(header);
        expect(Object.keys(parsed)).toEqual(DIRECTIVE_NAMES);
        for (const [name, sources] of Object.entries(parsed)) {
          const base = SPEC_DEFAULT_DIRECTIVES[name as keyof typeof SPEC_DEFAULT_DIRECTIVES];
          for (const source of sources) expect(base.includes(source) || ORIGIN_SOURCE.test(source)).toBe(true);
        }
        expect(header).not.toContain('unsafe-eval');
        expect(header.split(/[; ]+/)).not.toContain('*');
        for (const rejection of rejected) cspRejectionSchema.parse(rejection);
        for (const field of CSP_FIELDS)
          for (const entry of declared[field] ?? []) {
            const verdict = classifyCspSource(field, entry, { development });
            if (!verdict.ok && typeof entry === 'string') expect(rejected).toContainEqual({ field, value: entry.slice(0, 2048), reason: verdict.reason });
          }
      }),
      { numRuns: 200 },
    );
  });

  it('accepts at most the declared origins: each accepted source is the normalization of one declared entry of that field', () => {
    fc.assert(
      fc.property(declaredCsp, (declared) => {
        const parsed = directives(buildViewCsp(declared, PRODUCTION).header);
        const normalized = (field: (typeof CSP_FIELDS)[number]) =>
          (declared[field] ?? []).flatMap((entry) => {
            const verdict = classifyCspSource(field, entry, PRODUCTION);
            return verdict.ok ? [verdict.source] : [];
          });
        const connect = new Set(normalized('connectDomains'));
        for (const source of parsed['connect-src']) expect(source === "'none'" || connect.has(source)).toBe(true);
        const resources = new Set(normalized('resourceDomains'));
        for (const source of parsed['script-src'].slice(3)) expect(resources.has(source)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
