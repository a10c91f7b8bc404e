import { canonicalize, DEFAULT_CANONICAL_LIMITS } from './canonicalize';
import { expectCanonicalError } from './test-helpers';

/** `levels` nested arrays: nested(1) is `[]`, nested(2) is `[[]]`. */
function nested(levels: number): unknown[] {
  let value: unknown[] = [];
  for (let i = 1; i < levels; i++) value = [value];
  return value;
}

describe('canonicalize: accepted values', () => {
  it('writes no whitespace and sorts members at every level', () => {
    expect(canonicalize({ b: [1, 2, { d: true, c: null }], a: 'x' })).toBe('{"a":"x","b":[1,2,{"c":null,"d":true}]}');
  });

  it('sorts integer-like keys as strings, not in JS property order', () => {
    expect(canonicalize({ 9: 'a', 10: 'b', 1: 'c' })).toBe('{"1":"c","10":"b","9":"a"}');
  });

  it.each([
    [null, 'null'],
    [true, 'true'],
    [false, 'false'],
    ['s', '"s"'],
    [42, '42'],
    [-0, '0'],
    [[], '[]'],
    [{}, '{}'],
  ])('canonicalizes the top-level value %p as %s', (value, expected) => {
    expect(canonicalize(value)).toBe(expected);
  });

  it('escapes only what RFC 8785 escapes', () => {
    const input = '\u0000\u0007\u001f\b\t\n\f\r"\\/\u007f\u2028\u2029é😀';
    expect(canonicalize(input)).toBe(String.raw`"\u0000\u0007\u001f\b\t\n\f\r\"\\/` + '\u007f\u2028\u2029é😀"');
  });

  it('accepts a shared (non-cyclic) reference used more than once', () => {
    const shared = { x: 1 };
    expect(canonicalize({ a: shared, b: shared, c: [shared, shared] })).toBe('{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":1}]}');
  });

  it('accepts null-prototype objects and an own "__proto__" member', () => {
    expect(canonicalize(Object.assign(Object.create(null) as object, { b: 1, a: 2 }))).toBe('{"a":2,"b":1}');
    expect(canonicalize(JSON.parse('{"z":0,"__proto__":{"x":1}}'))).toBe('{"__proto__":{"x":1},"z":0}');
  });

  it('accepts well-formed surrogate pairs in keys and values', () => {
    expect(canonicalize({ '\ud83d\ude00': '\ud83d\ude00' })).toBe('{"😀":"😀"}');
  });

  it('ignores non-enumerable string-keyed properties, as JSON.stringify does', () => {
    const value = Object.defineProperty({ a: 1 }, 'hidden', { value: 2, enumerable: false });
    expect(canonicalize(value)).toBe('{"a":1}');
  });

  it.each([[{ b: [1, 'two', { c: 3.5 }], a: null }], [[{ y: 1e-7, x: -1.5 }, '\u2028']], ['plain']])('is idempotent for %j', (value) => {
    const once = canonicalize(value);
    expect(canonicalize(JSON.parse(once))).toBe(once);
  });
});

describe('canonicalize: rejected values', () => {
  it.each([
    ['NaN', { a: NaN }, '/a'],
    ['Infinity', Infinity, ''],
    ['-Infinity', [0, -Infinity], '/1'],
  ])('rejects %s as non-finite-number', (_name, value, path) => {
    expectCanonicalError(() => canonicalize(value), { reason: 'non-finite-number', path });
  });

  it.each([
    ['2^53', 2 ** 53, ''],
    ['-(2^53)', { n: -(2 ** 53) }, '/n'],
    ['1e300 (an integer value in IEEE 754)', [1e300], '/0'],
    ['Number.MAX_VALUE', { a: [Number.MAX_VALUE] }, '/a/0'],
  ])('rejects %s as unsafe-integer', (_name, value, path) => {
    expectCanonicalError(() => canonicalize(value), { reason: 'unsafe-integer', path });
  });

  it('accepts the extreme safe integers and a fractional value just below 2^52', () => {
    expect(canonicalize([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 4503599627370495.5])).toBe(
      '[9007199254740991,-9007199254740991,4503599627370495.5]',
    );
  });

  it.each([
    ['at the top level', undefined, ''],
    ['as a member value', { a: 1, b: undefined }, '/b'],
    ['as an array element', [1, undefined], '/1'],
    // eslint-disable-next-line no-sparse-arrays
    ['as an array hole', [1, , 3], '/1'],
    ['as holes of new Array(n)', { list: new Array(2) }, '/list/0'],
  ])('rejects undefined %s', (_name, value, path) => {
    expectCanonicalError(() => canonicalize(value), { reason: 'undefined', path });
  });

  it.each([
    ['function', { f: () => 1 }, '/f'],
    ['function', class Foo {}, ''],
    ['symbol', { s: Symbol('s') }, '/s'],
    ['symbol', { a: { [Symbol('k')]: 1, b: 2 } }, '/a'],
    ['bigint', { n: [BigInt(1)] }, '/n/0'],
  ] as const)('rejects a %s (%#)', (reason, value, path) => {
    expectCanonicalError(() => canonicalize(value), { reason, path });
  });

  class Point {
    constructor(readonly x = 1) {}
  }
  class MyArray extends Array<number> {}
  it.each([
    ['Date', new Date(0)],
    ['Map', new Map()],
    ['Set', new Set()],
    ['Buffer', Buffer.from('x')],
    ['Uint8Array', new Uint8Array(1)],
    ['RegExp', /x/],
    ['Error', new Error('x')],
    ['class instance', new Point()],
    ['boxed String', new String('x')],
    ['boxed Number', new Number(1)],
    ['boxed Boolean', new Boolean(true)],
    ['object with a custom prototype', Object.create({ inherited: 1 })],
    ['object with toJSON', { toJSON: () => 'x' }],
    ['Array subclass', MyArray.from([1])],
    ['array-like with Array.prototype but not an array', Object.create(Array.prototype)],
  ])('rejects a %s as non-plain-object', (_name, value) => {
    expectCanonicalError(() => canonicalize({ v: [value] }), { reason: 'non-plain-object', path: '/v/0' });
  });

  it('rejects cycles at the repeated reference', () => {
    const self: Record<string, unknown> = { a: 1 };
    self['self'] = self;
    expectCanonicalError(() => canonicalize(self), { reason: 'cycle', path: '/self' });

    const list: unknown[] = [1];
    list.push({ back: list });
    expectCanonicalError(() => canonicalize(list), { reason: 'cycle', path: '/1/back' });

    const root: Record<string, unknown> = {};
    root['a'] = { b: { c: root } };
    expectCanonicalError(() => canonicalize({ outer: root }), { reason: 'cycle', path: '/outer/a/b/c' });
  });

  it.each([
    ['a lone high surrogate', '\ud800', ''],
    ['a lone low surrogate inside a value', ['a\udc00b'], '/0'],
    ['a reversed pair', { s: '\ude00\ud83d' }, '/s'],
    ['a high surrogate at the end', { s: 'ok\ud83d' }, '/s'],
    ['a lone surrogate in a key', { ok: 1, '\ud83d': 1 }, '/\ud83d'],
  ])('rejects %s', (_name, value, path) => {
    expectCanonicalError(() => canonicalize(value), { reason: 'lone-surrogate', path });
  });

  it('escapes "~" and "/" in error paths as JSON Pointer does', () => {
    expectCanonicalError(() => canonicalize({ 'a/b': { '~c': NaN } }), { reason: 'non-finite-number', path: '/a~1b/~0c' });
  });
});

describe('canonicalize: limits', () => {
  it('defaults to 8 MiB and depth 64', () => {
    expect(DEFAULT_CANONICAL_LIMITS).toEqual({ maxBytes: 8 * 1024 * 1024, maxDepth: 64 });
    expect(Object.isFrozen(DEFAULT_CANONICAL_LIMITS)).toBe(true);
  });

  it('counts the top-level container as depth 1 and fails one level past maxDepth', () => {
    expect(canonicalize(nested(3), { maxDepth: 3 })).toBe('[[[]]]');
    expectCanonicalError(() => canonicalize(nested(4), { maxDepth: 3 }), { reason: 'max-depth', path: '/0/0/0' });
    expect(canonicalize({ a: { b: 1 } }, { maxDepth: 2 })).toBe('{"a":{"b":1}}');
    expectCanonicalError(() => canonicalize({ a: { b: {} } }, { maxDepth: 2 }), { reason: 'max-depth', path: '/a/b' });
  });

  it('does not count primitives as depth', () => {
    expect(canonicalize(1, { maxDepth: 0 })).toBe('1');
    expectCanonicalError(() => canonicalize([], { maxDepth: 0 }), { reason: 'max-depth', path: '' });
  });

  it('applies the default maxDepth of 64 (also when passed explicitly as undefined)', () => {
    expect(() => canonicalize(nested(64))).not.toThrow();
    expectCanonicalError(() => canonicalize(nested(65), { maxDepth: undefined }), {
      reason: 'max-depth',
      path: '/0'.repeat(64),
    });
  });

  it('passes at exactly maxBytes and fails one byte under it, counting UTF-8 bytes', () => {
    const value = { a: 'é' }; // {"a":"é"} is 9 characters but 10 UTF-8 bytes
    const output = canonicalize(value);
    expect(Buffer.byteLength(output, 'utf8')).toBe(10);
    expect(canonicalize(value, { maxBytes: 10 })).toBe(output);
    expectCanonicalError(() => canonicalize(value, { maxBytes: 9 }), { reason: 'max-bytes', path: '', code: 'PAYLOAD_TOO_LARGE' });
    expectCanonicalError(() => canonicalize(value, { maxBytes: 8 }), { reason: 'max-bytes', path: '/a' });
  });

  it('counts a surrogate pair as 4 bytes', () => {
    expect(canonicalize('😀', { maxBytes: 6 })).toBe('"😀"');
    expectCanonicalError(() => canonicalize('😀', { maxBytes: 5 }), { reason: 'max-bytes', path: '' });
  });

  it('counts escapes at their escaped length', () => {
    expect(canonicalize('\u0000', { maxBytes: 8 })).toBe('"\\u0000"');
    expectCanonicalError(() => canonicalize('\u0000', { maxBytes: 7 }), { reason: 'max-bytes', path: '' });
  });

  it('rejects a string over the default 8 MiB', () => {
    const big = 'x'.repeat(DEFAULT_CANONICAL_LIMITS.maxBytes - 1); // plus two quotes: one byte over
    expectCanonicalError(() => canonicalize({ big }), { reason: 'max-bytes', path: '/big', code: 'PAYLOAD_TOO_LARGE' });
    expect(canonicalize(big.slice(1)).length).toBe(DEFAULT_CANONICAL_LIMITS.maxBytes);
  });

  it('stops as soon as the limit is passed instead of serializing the rest', () => {
    const list: string[] = new Array(100).fill('x'.repeat(1000));
    let reached = false;
    Object.defineProperty(list, 50, {
      enumerable: true,
      get: () => {
        reached = true;
        return 'late';
      },
    });
    expectCanonicalError(() => canonicalize(list, { maxBytes: 10_000 }), { reason: 'max-bytes', path: '/9' });
    expect(reached).toBe(false);
  });

  it.each([[{ maxBytes: -1 }], [{ maxDepth: 1.5 }], [{ maxDepth: NaN }], [{ maxBytes: Infinity }]])('throws RangeError for the invalid limits %p', (limits) => {
    expect(() => canonicalize(1, limits)).toThrow(RangeError);
  });
});
