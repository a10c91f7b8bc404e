/**
 * Extra output bytes per input byte: 1 for a two-character escape (`\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`), 5 for
 * `\u00XX` (the other C0 controls), 0 for a byte JSON carries as it is (everything else, UTF-8 sequences included).
 */
const EXTRA = new Uint8Array(256);
const SHORT = new Uint8Array(256);
for (let byte = 0; byte < 0x20; byte++) EXTRA[byte] = 5;
for (const [byte, letter] of [
  [0x08, 'b'],
  [0x09, 't'],
  [0x0a, 'n'],
  [0x0c, 'f'],
  [0x0d, 'r'],
  [0x22, '"'],
  [0x5c, '\\'],
] as const) {
  EXTRA[byte] = 1;
  SHORT[byte] = letter.charCodeAt(0);
}
const HEX = Buffer.from('0123456789abcdef', 'latin1');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The JSON string literal (quotes included) of the text that valid UTF-8 bytes hold, as UTF-8 bytes, without decoding
 * them: byte for byte what `Buffer.from(JSON.stringify(text))` gives. Valid UTF-8 decodes to a well-formed string,
 * so `JSON.stringify` escapes no surrogate, and every byte of 0x80 or more is copied. The caller checks the bytes
 * with `isUtf8` first; on other bytes the literal would carry them as they are.
 *
 * Why: a large View document would otherwise be decoded into a string, escaped by `JSON.stringify` and encoded
 * again, three passes over it where this is one (or two when it has more to escape than the first guess allows).
 */
export function jsonStringLiteralOfUtf8(bytes: Uint8Array): Buffer {
  // One pass into a guess of the size, enough for markup and text (a few % of quotes and line breaks); when the
  // bytes need more, the exact size is counted and the pass runs again.
  const guessed = Buffer.allocUnsafe(bytes.length + (bytes.length >> 3) + 2);
  const length = escapeInto(bytes, guessed, guessed.length - 7); // room for the longest escape and the closing quote
  if (length >= 0) return guessed.subarray(0, length);
  const exact = Buffer.allocUnsafe(exactLength(bytes));
  escapeInto(bytes, exact, Infinity);
  return exact;
}

function exactLength(bytes: Uint8Array): number {
  let extra = 0;
  for (let i = 0; i < bytes.length; i++) extra += EXTRA[bytes[i] ?? 0] ?? 0;
  return bytes.length + extra + 2;
}

/** Writes the literal into `out`: its length, or -1 once more than `limit` bytes were written before the end. */
function escapeInto(bytes: Uint8Array, out: Buffer, limit: number): number {
  let o = 0;
  out[o++] = QUOTE;
  for (let i = 0; i < bytes.length; i++) {
    if (o > limit) return -1;
    const byte = bytes[i] ?? 0;
    const extra = EXTRA[byte] ?? 0;
    if (extra === 0) {
      out[o++] = byte;
    } else {
      out[o++] = BACKSLASH;
      if (extra === 1) {
        out[o++] = SHORT[byte] ?? 0;
      } else {
        out[o++] = 0x75; // u
        out[o++] = 0x30;
        out[o++] = 0x30;
        out[o++] = HEX[byte >> 4] ?? 0;
        out[o++] = HEX[byte & 15] ?? 0;
      }
    }
  }
  out[o++] = QUOTE;
  return o;
}
