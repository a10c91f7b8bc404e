import { ReadBuffer } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StdioLineBuffer, useLinearStdioReads } from './stdio-line-buffer';

const request = (id: number, text = '') => ({ jsonrpc: '2.0', id, method: 'echo', params: { text } });
const wire = (messages: unknown[]) => Buffer.from(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));

/** Everything a buffer yields for `bytes` cut at `cuts`, errors included, in order. */
function drain(buffer: Pick<StdioLineBuffer, 'append' | 'readMessage'>, bytes: Buffer, cuts: number[]): unknown[] {
  const out: unknown[] = [];
  let from = 0;
  for (const to of [...cuts, bytes.length]) {
    buffer.append(bytes.subarray(from, to));
    from = to;
    for (;;) {
      try {
        const message = buffer.readMessage();
        if (message === null) break;
        out.push(message);
      } catch (error) {
        out.push({ threw: (error as Error).name });
      }
    }
  }
  return out;
}

/** Deterministic pseudo-random cut points (a tiny LCG: reproducible without a seed library). */
function cutsOf(length: number, count: number, seed: number): number[] {
  let x = seed;
  const cuts = new Set<number>();
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    cuts.add(1 + (x % Math.max(1, length - 1)));
  }
  return [...cuts].sort((a, b) => a - b);
}

describe('StdioLineBuffer', () => {
  it('yields what the SDK ReadBuffer yields, for every way the stream is cut', () => {
    const bytes = Buffer.concat([
      wire([request(1, 'a'), request(2, 'é ✓ 😀')]),
      Buffer.from('not json at all\n'),
      Buffer.from('{"jsonrpc":"2.0","id":3,"method":"crlf"}\r\n'),
      Buffer.from('{"neither":"json-rpc"}\n'),
      wire([request(4, 'x'.repeat(5000))]),
      Buffer.from('{"jsonrpc":"2.0","id":5,"method":"partial"'), // never completed
    ]);
    for (let seed = 1; seed <= 40; seed++) {
      const cuts = cutsOf(bytes.length, seed % 12, seed);
      expect(drain(new StdioLineBuffer(), bytes, cuts)).toEqual(drain(new ReadBuffer(), bytes, cuts));
    }
    const ours = drain(new StdioLineBuffer(), bytes, []);
    expect(ours.map((m) => (m as { id?: number }).id ?? m)).toEqual([1, 2, 3, { threw: 'ZodError' }, 4]);
  });

  it('reads a 4 MB line arriving in 64 KiB chunks whole, byte for byte', () => {
    const text = 'é'.repeat(2_200_000);
    const bytes = wire([request(7, text)]);
    const cuts = Array.from({ length: Math.floor(bytes.length / 65_536) }, (_, i) => (i + 1) * 65_536);
    const [message] = drain(new StdioLineBuffer(), bytes, cuts) as [{ params: { text: string } }];
    expect(message.params.text).toBe(text);
  });

  it('refuses a chunk that takes it over its bound, and starts empty after', () => {
    const buffer = new StdioLineBuffer(100);
    buffer.append(Buffer.from('{"jsonrpc":"2.0",'));
    expect(() => buffer.append(Buffer.alloc(90, 0x20))).toThrow('ReadBuffer exceeded maximum size of 100 bytes');
    buffer.append(wire([request(9)]));
    expect(buffer.readMessage()).toEqual(request(9));
  });
});

describe('useLinearStdioReads', () => {
  it('replaces the SDK transport read buffer, keeping its bound, and a real child process is read through it', async () => {
    const text = 'y'.repeat(1_500_000);
    // The child writes one large JSON-RPC line: the pipe delivers it in many reads.
    const script = `process.stdout.write(JSON.stringify(${JSON.stringify(request(11, ''))}).replace('"text":""', '"text":"' + 'y'.repeat(1500000) + '"') + '\\n')`;
    const transport = useLinearStdioReads(new StdioClientTransport({ command: process.execPath, args: ['-e', script], stderr: 'ignore' }));
    const internals = transport as unknown as { _readBuffer: unknown };
    expect(internals._readBuffer).toBeInstanceOf(StdioLineBuffer);
    expect((internals._readBuffer as { maxBufferSize: number }).maxBufferSize).toBe(10 * 1024 * 1024);

    const received = new Promise<unknown>((resolve) => (transport.onmessage = resolve));
    await transport.start();
    const message = (await received) as { id: number; params: { text: string } };
    expect(message.id).toBe(11);
    expect(message.params.text).toBe(text);
    await transport.close();
  });

  it('fails loudly when the SDK transport has no read buffer to replace', () => {
    const transport = new StdioClientTransport({ command: process.execPath });
    (transport as unknown as { _readBuffer: unknown })._readBuffer = undefined;
    expect(() => useLinearStdioReads(transport)).toThrow('the SDK changed');
  });
});
