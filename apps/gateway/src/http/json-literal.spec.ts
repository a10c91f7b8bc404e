import { randomBytes } from 'node:crypto';
import { jsonStringLiteralOfUtf8 } from './json-literal';

/** What the literal must equal: the bytes decoded, `JSON.stringify`'d, encoded again. */
const expected = (text: string) => Buffer.from(JSON.stringify(text), 'utf8');
const literalOf = (text: string) => jsonStringLiteralOfUtf8(Buffer.from(text, 'utf8'));

describe('jsonStringLiteralOfUtf8', () => {
  it('escapes exactly as JSON.stringify does, for every ASCII character', () => {
    const ascii = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)).join('');
    expect(literalOf(ascii).equals(expected(ascii))).toBe(true);
    expect(literalOf('\b\f\n\r\t"\\').toString()).toBe('"\\b\\f\\n\\r\\t\\"\\\\"');
    expect(literalOf('\u0000\u001f').toString()).toBe('"\\u0000\\u001f"');
  });

  it('copies multi-byte UTF-8 as it is: accents, symbols, astral characters, U+2028/2029, a byte-order mark', () => {
    const text = '\ufeffé€😀\u2028\u2029\u007f<p class="x">\n</p>';
    const literal = literalOf(text);
    expect(literal.equals(expected(text))).toBe(true);
    expect(JSON.parse(literal.toString('utf8'))).toBe(text);
  });

  it('answers the empty text and texts of one escaped byte', () => {
    expect(literalOf('').toString()).toBe('""');
    expect(literalOf('"').toString()).toBe('"\\""');
    expect(literalOf('\u0001').toString()).toBe('"\\u0001"');
  });

  it('is exact when a text needs more room than the first guess (every byte escaped, long escapes)', () => {
    for (const text of ['"'.repeat(10_000), '\u0001'.repeat(10_000), `${'a'.repeat(1000)}${'\u0002'.repeat(500)}`]) {
      expect(literalOf(text).equals(expected(text))).toBe(true);
    }
  });

  it('equals JSON.stringify on random well-formed texts of every size up to a few hundred KB', () => {
    const alphabet = ['a', ' ', '"', '\\', '\n', '\t', '\u0003', 'é', '€', '😀', '\u2028', '<', '>'];
    for (const size of [1, 7, 8, 9, 63, 64, 65, 1000, 300_000]) {
      const picks = randomBytes(size);
      const text = Array.from(picks, (byte) => alphabet[byte % alphabet.length]).join('');
      expect(literalOf(text).equals(expected(text))).toBe(true);
    }
  });

  it('reads a view into a larger buffer without touching the bytes around it', () => {
    const whole = Buffer.from('xx"ab"yy', 'utf8');
    expect(jsonStringLiteralOfUtf8(whole.subarray(2, 6)).toString()).toBe('"\\"ab\\""');
  });
});
