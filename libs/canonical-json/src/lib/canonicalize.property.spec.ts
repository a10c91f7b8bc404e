import fc from 'fast-check';
import { canonicalize } from './canonicalize';
import { CanonicalJsonError } from './errors';
import { expectCanonicalError } from './test-helpers';

// JSON values inside the I-JSON domain: no unsafe integers, no lone surrogates. -0 and null-prototype
// objects (from fc.dictionary) are included on purpose.
const safeNumber = fc.oneof(
  fc.integer(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 5e-324, 1e-7, 0.1, -0),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -(2 ** 53), max: 2 ** 53 }).filter((n) => !Number.isInteger(n) || Number.isSafeInteger(n)),
);
const tricky = fc.constantFrom('\u0000', '\u001f', '"', '\\', '/', '\u007f', '\u2028', 'é', '€', '😀', '\ufb33');
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: tricky }));
const key = fc.oneof(text, fc.constantFrom('__proto__', '1', '10', '9', 'a', 'b', 'toJSON'));

const { json } = fc.letrec<{ json: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
  json: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), safeNumber, text, tie('array'), tie('object')),
  array: fc.array(tie('json'), { maxLength: 5 }),
  object: fc.dictionary(key, tie('json'), { maxKeys: 6 }),
}));

/** Deterministic PRNG so a shrunk counterexample replays the same shuffle. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A deep copy whose object members are inserted in a random order (defineProperty keeps "__proto__" an own key). */
function reinserted(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) return value.map((item) => reinserted(item, random));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [keys[i], keys[j]] = [keys[j], keys[i]];
  }
  const copy: Record<string, unknown> = {};
  for (const k of keys) {
    const member = reinserted((value as Record<string, unknown>)[k], random);
    Object.defineProperty(copy, k, { value: member, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** What JSON.parse gives back: the same data, with -0 (which JSON cannot carry) as 0. */
function asParsed(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(asParsed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asParsed(v)]));
}

/** The error code and reason `fn` fails with (undefined if it does not fail with a CanonicalJsonError). */
function failure(fn: () => unknown): { code: string; reason: string } | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof CanonicalJsonError) return { code: error.code, reason: error.details.reason };
  }
  return undefined;
}

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

describe('canonicalize: properties', () => {
  it('is idempotent through JSON.parse', () => {
    fc.assert(
      fc.property(json, (value) => {
        const once = canonicalize(value);
        expect(canonicalize(JSON.parse(once))).toBe(once);
      }),
      { numRuns: 300 },
    );
  });

  it('emits valid JSON that parses back to the input (modulo -0)', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(JSON.parse(canonicalize(value))).toEqual(asParsed(value));
      }),
      { numRuns: 300 },
    );
  });

  it('does not depend on member insertion order', () => {
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        expect(canonicalize(reinserted(value, mulberry32(seed)))).toBe(canonicalize(value));
      }),
      { numRuns: 300 },
    );
  });

  it('passes at exactly its own UTF-8 size and fails one byte below', () => {
    fc.assert(
      fc.property(json, (value) => {
        const size = Buffer.byteLength(canonicalize(value), 'utf8');
        expect(canonicalize(value, { maxBytes: size })).toBe(canonicalize(value));
        expect(failure(() => canonicalize(value, { maxBytes: size - 1 }))).toEqual({ code: 'PAYLOAD_TOO_LARGE', reason: 'max-bytes' });
      }),
    );
  });

  it('passes at exactly its own depth and fails one level below', () => {
    fc.assert(
      fc.property(json, (value) => {
        const depth = depthOf(value);
        expect(() => canonicalize(value, { maxDepth: depth })).not.toThrow();
        if (depth > 0) {
          expect(failure(() => canonicalize(value, { maxDepth: depth - 1 }))).toEqual({ code: 'INVALID_ARGUMENT', reason: 'max-depth' });
        }
      }),
    );
  });

  it('accepts a string exactly when it is well-formed UTF-16', () => {
    const codeUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)) });
    const surrogateHeavy = fc.string({ unit: fc.integer({ min: 0xd7ff, max: 0xe000 }).map((u) => String.fromCharCode(u)) });
    fc.assert(
      fc.property(fc.oneof(codeUnits, surrogateHeavy), (s) => {
        // A UTF-8 round trip is lossless exactly when there is no lone surrogate.
        const wellFormed = Buffer.from(s, 'utf8').toString('utf8') === s;
        if (wellFormed) expect(JSON.parse(canonicalize(s))).toBe(s);
        else expectCanonicalError(() => canonicalize({ s }), { reason: 'lone-surrogate', path: '/s' });
      }),
      { numRuns: 300 },
    );
  });
});
