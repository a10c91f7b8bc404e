import { isUtf8 } from 'node:buffer';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LETTER_U = 0x75;
/** The escapes JSON has besides `\uXXXX`: each stands for one byte. */
const SHORT_ESCAPES = new Set([QUOTE, BACKSLASH, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]); // " \ / b f n r t

/**
 * One JSON string token exactly as a server wrote it (quotes included), and the UTF-8 length of the text it holds.
 * Passing these bytes on, instead of the decoded string, saves decoding a large text and escaping it again for the
 * next JSON document it goes into; `decode()` gives the text when it is needed after all.
 */
export class JsonStringLiteral {
  private constructor(
    /** The token's bytes: valid UTF-8, a quote at each end, only valid escapes, no raw control character. */
    readonly bytes: Buffer,
    /** `Buffer.byteLength` of the decoded text (a lone surrogate counts 3, as it encodes to U+FFFD). */
    readonly utf8Bytes: number,
  ) {}

  /** The token if `bytes` is exactly one well-formed JSON string of valid UTF-8; null otherwise. */
  static of(bytes: Buffer): JsonStringLiteral | null {
    if (bytes.length < 2 || bytes[0] !== QUOTE || bytes[bytes.length - 1] !== QUOTE || !isUtf8(bytes)) return null;
    const utf8Bytes = decodedUtf8Length(bytes);
    return utf8Bytes === null ? null : new JsonStringLiteral(bytes, utf8Bytes);
  }

  /** From a text in hand (a transport that gave no token): its JSON literal, encoded. */
  static fromText(text: string): JsonStringLiteral {
    return new JsonStringLiteral(Buffer.from(JSON.stringify(text), 'utf8'), Buffer.byteLength(text, 'utf8'));
  }

  decode(): string {
    return JSON.parse(this.bytes.toString('utf8')) as string;
  }
}

/**
 * The string tokens of a JSON text with at least `minBytes` bytes between their quotes, as [start, end) byte ranges
 * (quotes included), in order; null when a string never ends. Outside a string every `"` opens one; inside, a `"`
 * after an odd run of backslashes is escaped. Everything else (structure, escapes, bytes) is the parser's to judge:
 * a line is still parsed whole, with these tokens standing in by other strings.
 */
export function longStringTokens(json: Buffer, minBytes: number): [number, number][] | null {
  const tokens: [number, number][] = [];
  let position = 0;
  for (;;) {
    const open = json.indexOf(QUOTE, position);
    if (open === -1) return tokens;
    let close = open;
    for (;;) {
      close = json.indexOf(QUOTE, close + 1);
      if (close === -1) return null;
      let backslashes = 0;
      while (json[close - 1 - backslashes] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) break;
    }
    if (close - open - 1 >= minBytes) tokens.push([open, close + 1]);
    position = close + 1;
  }
}

/**
 * The UTF-8 length of the text a JSON string token holds, or null when its content is not valid JSON: a raw byte
 * below 0x20, or an escape JSON does not have. Raw bytes (valid UTF-8) count as they are; `\uXXXX` counts as its
 * code point encodes, a surrogate pair as 4 and a lone surrogate as 3.
 */
function decodedUtf8Length(token: Buffer): number | null {
  const end = token.length - 1; // the closing quote
  // Native searches (one per control byte, one per escape) rather than a loop over every byte: a few times faster.
  for (let control = 0; control < 0x20; control++) if (token.indexOf(control, 1) !== -1) return null;
  // Every content byte counts one; an escape then gives back what it takes beyond the bytes it stands for.
  let length = end - 1;
  for (let i = token.indexOf(BACKSLASH, 1); i !== -1 && i < end; i = token.indexOf(BACKSLASH, i)) {
    const escape = token[i + 1] as number;
    if (i + 1 >= end) return null; // the closing quote escaped: the string never ends
    if (SHORT_ESCAPES.has(escape)) {
      length -= 1;
      i += 2;
      continue;
    }
    if (escape !== LETTER_U) return null;
    const unit = hexUnit(token, i + 2, end);
    if (unit === null) return null;
    if (unit >= 0xd800 && unit <= 0xdbff && token[i + 6] === BACKSLASH && token[i + 7] === LETTER_U) {
      const low = hexUnit(token, i + 8, end);
      if (low === null) return null;
      if (low >= 0xdc00 && low <= 0xdfff) {
        length -= 12 - 4;
        i += 12;
        continue;
      }
    }
    length -= 6 - (unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3);
    i += 6;
  }
  return length;
}

/** The four hex digits at `at` as a UTF-16 unit, or null when they are not four hex digits before `end`. */
function hexUnit(token: Buffer, at: number, end: number): number | null {
  if (at + 4 > end) return null;
  let unit = 0;
  for (let k = at; k < at + 4; k++) {
    const c = token[k] as number;
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (digit < 0) return null;
    unit = unit * 16 + digit;
  }
  return unit;
}
