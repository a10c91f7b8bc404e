import fc from 'fast-check';
import { canonicalizeUri, UriPolicyError, type UriRejection } from './uri';

function rejection(uri: string): UriRejection | 'accepted' {
  try {
    canonicalizeUri(uri);
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(UriPolicyError);
    expect((error as UriPolicyError).code).toBe('INVALID_ARGUMENT');
    return (error as UriPolicyError).reason;
  }
}

describe('canonicalizeUri', () => {
  it.each([
    ['UI://Apps.Example/Widget', 'ui://apps.example/Widget'],
    ['ui://apps.example/w#frag', 'ui://apps.example/w'],
    ['ui://apps.example/w?b=2&a=1', 'ui://apps.example/w?b=2&a=1'],
    ['ui://apps.example/%7Euser/%61bc', 'ui://apps.example/~user/abc'],
    ['ui://apps.example/a%2fb', 'ui://apps.example/a%2Fb'],
    ['ui://apps.example/caf\u00e9', 'ui://apps.example/caf%C3%A9'],
    ['ui://apps.example/caf%c3%a9', 'ui://apps.example/caf%C3%A9'],
    ['ui://b\u00fccher.example/x', 'ui://xn--bcher-kva.example/x'],
    ['https://Example.COM:443/a', 'https://example.com/a'],
    ['https://example.com:8443', 'https://example.com:8443/'],
    ['http://example.com:80/', 'http://example.com/'],
    ['ui://apps.example', 'ui://apps.example'],
    ['ui://apps.example/\u{1F600}', 'ui://apps.example/%F0%9F%98%80'],
  ])('%s → %s', (input, expected) => {
    expect(canonicalizeUri(input)).toBe(expected);
  });

  describe('adversarial families', () => {
    it.each<[string, string, UriRejection]>([
      ['dot segment', 'ui://a/w/../admin', 'dot-segment'],
      ['single dot', 'ui://a/./w', 'dot-segment'],
      ['encoded dot segment', 'ui://a/w/%2e%2e/admin', 'dot-segment'],
      ['mixed-case encoded dot', 'ui://a/w/.%2E/admin', 'dot-segment'],
      ['trailing dot segment', 'ui://a/w/..', 'dot-segment'],
      ['authority swap via userinfo', 'ui://trusted.example@evil.example/w', 'userinfo'],
      ['userinfo with password', 'https://user:pw@example.com/', 'userinfo'],
      ['encoded authority', 'ui://trusted%2eexample/w', 'invalid-host'],
      ['backslash', 'ui://a\\b/w', 'invalid-character'],
      ['whitespace', 'ui://a/w x', 'invalid-character'],
      ['control character', 'ui://a/w\u0000', 'invalid-character'],
      ['bad escape', 'ui://a/w%zz', 'invalid-escape'],
      ['truncated escape', 'ui://a/w%4', 'invalid-escape'],
      ['port out of range', 'https://a:70000/', 'invalid-port'],
      ['unknown scheme', 'javascript://alert(1)/', 'unsupported-scheme'],
      ['no authority', 'ui:widget', 'missing-authority'],
      ['empty host', 'ui:///widget', 'missing-authority'],
      ['invalid IDNA', 'ui://xn--a.example/', 'invalid-host'],
    ])('%s is rejected', (_family, uri, reason) => {
      expect(rejection(uri)).toBe(reason);
    });

    it('keeps an encoded slash encoded, so it can never act as a path separator', () => {
      expect(canonicalizeUri('ui://a/w%2F..%2Fadmin')).toBe('ui://a/w%2F..%2Fadmin');
    });

    it('treats case, default port and IDNA spellings of one resource as equal', () => {
      const spellings = ['https://B\u00dcCHER.example:443/x', 'https://xn--bcher-kva.example/x', 'HTTPS://xn--BCHER-KVA.example:443/x'];
      expect(new Set(spellings.map(canonicalizeUri))).toEqual(new Set(['https://xn--bcher-kva.example/x']));
    });
  });

  it('is idempotent (property)', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9\-._~%!$&'()*+,;=:@\u00e9\u4e2d]{0,12}$/);
    const uri = fc
      .tuple(
        fc.constantFrom('ui', 'UI', 'https', 'http'),
        fc.constantFrom('apps.example', 'APPS.example', 'b\u00fccher.example', '127.0.0.1', '[::1]'),
        fc.option(fc.integer({ min: 0, max: 65535 }), { nil: undefined }),
        fc.array(segment, { maxLength: 5 }),
        fc.option(fc.stringMatching(/^[a-z0-9=&%]{0,10}$/), { nil: undefined }),
      )
      .map(
        ([scheme, host, port, segments, query]) =>
          `${scheme}://${host}${port === undefined ? '' : `:${port}`}${segments.map((s) => `/${s}`).join('')}${query === undefined ? '' : `?${query}`}`,
      );
    fc.assert(
      fc.property(uri, (candidate) => {
        let once: string;
        try {
          once = canonicalizeUri(candidate);
        } catch {
          return true;
        }
        expect(canonicalizeUri(once)).toBe(once);
        return true;
      }),
      { numRuns: 2000 },
    );
  });
});
