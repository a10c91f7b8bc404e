import { deserializeMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/client';
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { LongTexts } from './long-texts';

type JsonRpcMessage = ReturnType<typeof deserializeMessage>;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * The SDK's stdio `ReadBuffer` contract (newline-delimited JSON-RPC, the same parse, the same size bound), in
 * linear time. The SDK's copies the whole buffer on every chunk and searches it from the start on every read, so
 * a message of n bytes arriving in 64 KiB pipe reads costs O(n²/64 KiB): about 40 ms for the 4.3 MB PDF View's
 * `resources/read` answer against 7 ms for its `JSON.parse`. Here each byte is searched once and copied once.
 *
 * As the SDK's: a line that is not JSON is skipped; one that is JSON but not JSON-RPC throws after it is consumed
 * (the transport reports it and reads on); a chunk that would take the buffer over `maxBufferSize` clears it and
 * throws (the transport closes). With `longTexts`, a line it takes (long texts of a read's answer) is read through it.
 */
export class StdioLineBuffer {
  /** Unconsumed bytes, in order. */
  private parts: Buffer[] = [];
  private bytes = 0;
  /** How many leading `parts` are known to hold no newline. */
  private searched = 0;

  constructor(
    private readonly maxBufferSize = STDIO_DEFAULT_MAX_BUFFER_SIZE,
    private readonly longTexts?: LongTexts,
  ) {}

  append(chunk: Buffer): void {
    if (this.bytes + chunk.length > this.maxBufferSize) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBufferSize} bytes`);
    }
    this.parts.push(chunk);
    this.bytes += chunk.length;
  }

  readMessage(): JsonRpcMessage | null {
    for (;;) {
      const line = this.nextLine();
      if (line === null) return null;
      try {
        const message = this.longTexts?.read(line) ?? deserializeMessage(line.toString('utf8'));
        this.longTexts?.answered(message);
        return message;
      } catch (error) {
        if (error instanceof SyntaxError) continue;
        throw error;
      }
    }
  }

  clear(): void {
    this.parts = [];
    this.bytes = 0;
    this.searched = 0;
  }

  /** The next complete line without its line ending, or null while none is complete. */
  private nextLine(): Buffer | null {
    for (let i = this.searched; i < this.parts.length; i++) {
      const part = this.parts[i];
      const at = part.indexOf(NEWLINE);
      if (at === -1) {
        this.searched = i + 1;
        continue;
      }
      const head = part.subarray(0, at);
      const line = i === 0 ? head : Buffer.concat([...this.parts.slice(0, i), head]);
      const rest = part.subarray(at + 1);
      this.parts = rest.length > 0 ? [rest, ...this.parts.slice(i + 1)] : this.parts.slice(i + 1);
      this.bytes -= line.length + 1;
      this.searched = 0;
      return line[line.length - 1] === CARRIAGE_RETURN ? line.subarray(0, -1) : line;
    }
    return null;
  }
}

/**
 * Gives a stdio transport the linear line buffer. The SDK does not expose its read buffer, so this replaces the
 * private field it reads on every stdout chunk, keeping its size bound; it fails loudly if a new SDK renames it
 * (`stdio-line-buffer.spec.ts` pins the field, and every stdio end-to-end test reads through it). With `longTexts`,
 * every message the transport sends is shown to it first (which requests are reads).
 */
export function useLinearStdioReads(transport: StdioClientTransport, longTexts?: LongTexts): StdioClientTransport {
  const internals = transport as unknown as { _readBuffer?: { append?: unknown; readMessage?: unknown; _maxBufferSize?: number } };
  const current = internals._readBuffer;
  if (typeof current?.append !== 'function' || typeof current.readMessage !== 'function')
    throw new Error('StdioClientTransport has no _readBuffer: the SDK changed; update StdioLineBuffer');
  internals._readBuffer = new StdioLineBuffer(current._maxBufferSize ?? STDIO_DEFAULT_MAX_BUFFER_SIZE, longTexts) as never;
  if (longTexts) {
    const send = transport.send.bind(transport);
    transport.send = (message) => {
      longTexts.sent(message);
      return send(message);
    };
  }
  return transport;
}
