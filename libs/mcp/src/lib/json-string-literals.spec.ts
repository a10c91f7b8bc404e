import { randomBytes } from 'node:crypto';
import { JsonStringLiteral, longStringTokens } from './json-string-literals';

const tokenOf = (json: string) => Buffer.from(json, 'utf8');

describe('longStringTokens', () => {
  it('finds the long strings of a JSON text in order, quotes included, past escaped quotes and backslash runs', () => {
    const long = 'x'.repeat(20);
    const json = Buffer.from(JSON.stringify({ a: 'short', b: `${long}"\\`, c: [1, `\\\\${long}`], [`k${long}`]: true }), 'utf8');
    const tokens = longStringTokens(json, 20)!;
    const texts = tokens.map(([start, end]) => JSON.parse(json.subarray(start, end).toString('utf8')) as string);
    expect(texts).toEqual([`${long}"\\`, `\\\\${long}`, `k${long}`]);
  });

  it('answers an empty list when no string is long enough, and null for a string that never ends', () => {
    expect(longStringTokens(tokenOf('{"a":"bc","d":[1,2]}'), 3)).toEqual([]);
    expect(longStringTokens(tokenOf('{"a":"bcdef'), 3)).toBeNull();
    expect(longStringTokens(tokenOf('{"a":"bcdef\\"}'), 3)).toBeNull();
  });

  it('agrees with JSON.parse on random texts full of quotes and backslashes', () => {
    const alphabet = ['a', '"', '\\', '\n', 'é', '😀', '\u0001', ' '];
    for (let round = 0; round < 50; round++) {
      const strings = Array.from({ length: 4 }, () => Array.from(randomBytes(40), (b) => alphabet[b % alphabet.length]).join(''));
      const json = Buffer.from(JSON.stringify({ strings, n: round }), 'utf8');
      const found = longStringTokens(json, 0)!.map(([s, e]) => JSON.parse(json.subarray(s, e).toString('utf8')) as unknown);
      expect(found).toEqual(['strings', ...strings, 'n']);
    }
  });
});

describe('JsonStringLiteral', () => {
  it('keeps the bytes as written and counts the UTF-8 bytes of the text they hold, as Buffer.byteLength does', () => {
    for (const json of [
      '""',
      '"abc"',
      '"é€😀"',
      '"\\u00e9\\u20ac\\ud83d\\ude00"',
      '"\\ud800"',
      '"\\udc00x"',
      '"\\ud83dx"',
      '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
      '"\\u0000"',
    ]) {
      const literal = JsonStringLiteral.of(tokenOf(json))!;
      expect(literal).not.toBeNull();
      expect(literal.bytes.toString('utf8')).toBe(json);
      const text = JSON.parse(json) as string;
      expect(literal.utf8Bytes).toBe(Buffer.byteLength(text, 'utf8'));
      expect(literal.decode()).toBe(text);
    }
  });

  it('refuses what is not one well-formed JSON string: raw control bytes, unknown or short escapes, no quotes, not UTF-8', () => {
    for (const bytes of [
      tokenOf('"a\nb"'),
      tokenOf('"a\tb"'),
      tokenOf('"\\x41"'),
      tokenOf('"\\u12"'),
      tokenOf('"\\u12g4"'),
      tokenOf('"\\ud83d\\u12"'),
      tokenOf('abc'),
      tokenOf('"abc\\"'),
      tokenOf('"'),
      Buffer.from([0x22, 0xff, 0x22]),
      Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), // a surrogate in raw UTF-8 (CESU), not valid UTF-8
    ]) {
      expect(JsonStringLiteral.of(bytes)).toBeNull();
    }
  });

  it('counts as Buffer.byteLength on random texts, with JSON.stringify escapes and lone surrogates', () => {
    const alphabet = ['a', '"', '\\', '\n', '\u0002', 'é', '€', '😀', '\ud800', '\udfff', '\u2028'];
    for (let round = 0; round < 100; round++) {
      const text = Array.from(randomBytes(64), (b) => alphabet[b % alphabet.length]).join('');
      const literal = JsonStringLiteral.of(Buffer.from(JSON.stringify(text), 'utf8'))!;
      expect(literal.utf8Bytes).toBe(Buffer.byteLength(text, 'utf8'));
      expect(literal.decode()).toBe(text);
    }
  });

  it('makes the literal of a text in hand', () => {
    const literal = JsonStringLiteral.fromText('é"\n');
    expect(literal.bytes.toString('utf8')).toBe('"é\\"\\n"');
    expect(literal.utf8Bytes).toBe(4);
  });
});
