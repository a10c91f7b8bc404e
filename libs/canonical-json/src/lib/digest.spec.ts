import { createHash } from 'node:crypto';
import { canonicalDigest, DIGEST_PURPOSES } from './digest';
import { expectCanonicalError } from './test-helpers';

describe('canonicalDigest', () => {
  const value = { b: [true, null, 'x'], a: 1 };

  it('matches a pinned digest (computed independently with sha256sum)', () => {
    // printf 'apphost.digest.v1\nsealed-result\n{"a":1,"b":[true,null,"x"]}' | sha256sum
    expect(canonicalDigest('sealed-result', value)).toBe('72684380bffae23c35e0aa336d5c4851d968850e497d5d60c8bac84358e7e5bd');
  });

  it('hashes the documented envelope: tag, purpose and canonical value separated by newlines', () => {
    const envelope = 'apphost.digest.v1\nreplay-identity\n{"a":1,"b":[true,null,"x"]}';
    expect(canonicalDigest('replay-identity', value)).toBe(createHash('sha256').update(envelope, 'utf8').digest('hex'));
  });

  it('is lowercase hex SHA-256 for every purpose', () => {
    for (const purpose of DIGEST_PURPOSES) expect(canonicalDigest(purpose, value)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('separates purposes: the same value gives a different digest per purpose', () => {
    const digests = DIGEST_PURPOSES.map((purpose) => canonicalDigest(purpose, value));
    expect(new Set(digests).size).toBe(DIGEST_PURPOSES.length);
  });

  it('does not depend on key order', () => {
    expect(canonicalDigest('binding-revision', { a: 1, b: { d: 2, c: 3 } })).toBe(canonicalDigest('binding-revision', { b: { c: 3, d: 2 }, a: 1 }));
  });

  it('distinguishes values that differ only in type', () => {
    expect(canonicalDigest('sealed-result', '1')).not.toBe(canonicalDigest('sealed-result', 1));
  });

  it.each([['unknown'], [''], ['Sealed-Result'], ['sealed-result\n'], ['apphost.digest.v1']])('rejects the unknown purpose %p', (purpose) => {
    expectCanonicalError(() => canonicalDigest(purpose, value), { reason: 'unknown-purpose', path: '', code: 'INVALID_ARGUMENT' });
  });

  it('propagates canonicalization errors and limits', () => {
    expectCanonicalError(() => canonicalDigest('sealed-result', { a: [NaN] }), { reason: 'non-finite-number', path: '/a/0' });
    expectCanonicalError(() => canonicalDigest('sealed-result', 'xx', { maxBytes: 3 }), {
      reason: 'max-bytes',
      path: '',
      code: 'PAYLOAD_TOO_LARGE',
    });
  });
});
