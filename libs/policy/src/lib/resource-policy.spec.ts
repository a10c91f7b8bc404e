import { matchResourcePolicy } from './resource-policy';

describe('matchResourcePolicy', () => {
  const policy = { exact: ['ui://apps.example/dashboard'], prefixes: ['ui://apps.example/w'] };

  it.each([
    ['the exact URI', 'ui://apps.example/dashboard', true],
    ['the exact URI spelled differently', 'UI://APPS.example/dashboard#top', true],
    ['the prefix itself', 'ui://apps.example/w', true],
    ['a child of the prefix', 'ui://apps.example/w/x/y', true],
    ['a sibling that shares characters (boundary splice)', 'ui://apps.example/w-evil', false],
    ['a sibling that extends the last segment', 'ui://apps.example/wx', false],
    ['a dot-segment escape', 'ui://apps.example/w/../admin', false],
    ['an encoded-slash escape', 'ui://apps.example/w%2F..%2Fadmin', false],
    ['another host', 'ui://evil.example/w/x', false],
    ['an authority swap', 'ui://apps.example@evil.example/w/x', false],
    ['an unrelated URI', 'ui://apps.example/other', false],
    ['garbage', 'not a uri', false],
  ])('%s → %s', (_label, uri, expected) => {
    expect(matchResourcePolicy(policy, uri)).toBe(expected);
  });

  it('denies everything by default', () => {
    expect(matchResourcePolicy({}, 'ui://apps.example/dashboard')).toBe(false);
  });

  it('never matches through a policy entry that fails canonicalization', () => {
    expect(matchResourcePolicy({ prefixes: ['ui://apps.example/w/..'], exact: ['ui://x@apps.example/a'] }, 'ui://apps.example/w/x')).toBe(false);
    expect(matchResourcePolicy({ exact: ['ui://x@apps.example/a'] }, 'ui://apps.example/a')).toBe(false);
  });

  it('accepts a trailing-slash prefix without widening it', () => {
    expect(matchResourcePolicy({ prefixes: ['ui://apps.example/w/'] }, 'ui://apps.example/w/x')).toBe(true);
    expect(matchResourcePolicy({ prefixes: ['ui://apps.example/w/'] }, 'ui://apps.example/w-evil')).toBe(false);
  });
});

describe('matchResourcePolicy with a bare-scheme prefix', () => {
  const policy = { prefixes: ['ui://'] };

  it.each([
    ['a ui:// resource', 'ui://apps.example/w/x', true],
    ['another host of the scheme', 'UI://other/y', true],
    ['another scheme', 'file:///etc/passwd', false],
    ['a scheme that only starts alike', 'uix://a/b', false],
    ['a URI that does not canonicalize', 'ui://a/%zz', false],
  ])('%s → %s', (_name, uri, allowed) => {
    expect(matchResourcePolicy(policy, uri)).toBe(allowed);
  });
});
