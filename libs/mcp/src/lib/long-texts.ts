import { randomUUID } from 'node:crypto';
import { deserializeMessage } from '@modelcontextprotocol/client';
import { JsonStringLiteral, longStringTokens } from './json-string-literals';

type JsonRpcMessage = ReturnType<typeof deserializeMessage>;
type RequestId = string | number;

/** How long a string must be (bytes between its quotes) to be kept as written: below it, decoding costs little. */
export const LONG_TEXT_BYTES = 64 * 1024;
/** Long texts held at once, per connection; the oldest goes first (an answer the SDK dropped leaves one behind). */
const MAX_HELD = 64;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The long texts of `resources/read` answers on one stdio connection, kept as the JSON string tokens the server wrote
 * rather than decoded (a large View document is then never decoded, nor escaped again for the next JSON document
 * it goes into). A line qualifies only when every long string in it is the `text` of an item of an answer to a
 * `resources/read` this side sent and has not cancelled: each such text reaches the SDK as a marker string, and the
 * reader of the answer takes the literal it stands for (`take`). Any other line, and any line where a long string
 * sits anywhere else, is parsed whole, exactly as it came.
 */
export class LongTexts {
  private readonly reads = new Set<RequestId>();
  private readonly held = new Map<string, JsonStringLiteral>();
  /** Random per connection: no text a server sends can be taken for a marker. */
  private readonly prefix = `apphost-long-text:${randomUUID()}:`;
  private counter = 0;

  /** Every message this side sends: which requests are reads, and which reads a cancel ended. */
  sent(message: unknown): void {
    if (!isRecord(message)) return;
    const { method, id, params } = message;
    if (method === 'resources/read' && (typeof id === 'string' || typeof id === 'number')) this.reads.add(id);
    else if (method === 'notifications/cancelled' && isRecord(params)) this.reads.delete(params['requestId'] as RequestId);
  }

  /** Every message read: an answer ends its request. */
  answered(message: JsonRpcMessage): void {
    if (!('method' in message) && 'id' in message) this.reads.delete(message.id as RequestId);
  }

  /** The message of `line` with its long texts held, or null when the line does not qualify (parse it whole). */
  read(line: Buffer): JsonRpcMessage | null {
    if (line.length < LONG_TEXT_BYTES || this.reads.size === 0) return null;
    const tokens = longStringTokens(line, LONG_TEXT_BYTES);
    if (!tokens || tokens.length === 0) return null;
    const markers: string[] = [];
    const literals: JsonStringLiteral[] = [];
    const parts: Buffer[] = [];
    let from = 0;
    for (const [start, end] of tokens) {
      const literal = JsonStringLiteral.of(line.subarray(start, end));
      if (!literal) return null; // not a well-formed string (or not UTF-8): the whole line's parse decides
      const marker = `${this.prefix}${this.counter++}`;
      parts.push(line.subarray(from, start), Buffer.from(JSON.stringify(marker), 'utf8'));
      markers.push(marker);
      literals.push(literal);
      from = end;
    }
    parts.push(line.subarray(from));
    const message = deserializeMessage(Buffer.concat(parts).toString('utf8'));
    if (!this.qualifies(message, markers)) return null;
    markers.forEach((marker, i) => this.held.set(marker, literals[i] as JsonStringLiteral));
    for (const oldest of this.held.keys()) {
      if (this.held.size <= MAX_HELD) break;
      this.held.delete(oldest);
    }
    return message;
  }

  /**
   * The literal a marker stands for, once; undefined for any other text. A marker of this connection no longer held
   * throws: its answer outlived `MAX_HELD` later ones, and the text is gone.
   */
  take(text: string): JsonStringLiteral | undefined {
    if (!text.startsWith(this.prefix)) return undefined;
    const literal = this.held.get(text);
    if (!literal) throw new Error('a long text of this answer is no longer held');
    this.held.delete(text);
    return literal;
  }

  clear(): void {
    this.reads.clear();
    this.held.clear();
  }

  /** An answer to a pending read whose items' texts are exactly the markers: each once, none anywhere else. */
  private qualifies(message: JsonRpcMessage, markers: string[]): boolean {
    if ('method' in message || !('result' in message) || !this.reads.has(message.id as RequestId)) return false;
    const contents = (message.result as Record<string, unknown>)['contents'];
    if (!Array.isArray(contents)) return false;
    const found = new Set<string>();
    for (const item of contents) if (isRecord(item) && typeof item['text'] === 'string' && markers.includes(item['text'])) found.add(item['text']);
    return found.size === markers.length;
  }
}
