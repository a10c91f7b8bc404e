import { ReadBuffer } from '@modelcontextprotocol/client';
import { JsonStringLiteral } from './json-string-literals';
import { LONG_TEXT_BYTES, LongTexts } from './long-texts';
import { StdioLineBuffer } from './stdio-line-buffer';

/** Over the threshold, with everything a token can hold: escapes, multi-byte characters, an escaped surrogate pair. */
const LONG = `<p class="x">${'é€😀 \\ "q"\n'.repeat(LONG_TEXT_BYTES / 8)}</p>`;
/** As a server may write it: not as JSON.stringify would (an escaped é and an escaped pair). */
const WRITTEN = `"${JSON.stringify(LONG).slice(1, -1).replaceAll('é', '\\u00e9').replaceAll('😀', '\\ud83d\\ude00')}"`;
const readAnswer = (id: number, items: string) => `{"jsonrpc":"2.0","id":${id},"result":{"contents":[${items}]}}\n`;
const item = (text: string, extra = '') => `{"uri":"ui://a/app.html","mimeType":"text/html;profile=mcp-app","text":${text}${extra}}`;

function reader(): { texts: LongTexts; buffer: StdioLineBuffer; read(line: string): unknown } {
  const texts = new LongTexts();
  const buffer = new StdioLineBuffer(undefined, texts);
  return {
    texts,
    buffer,
    read(line: string) {
      buffer.append(Buffer.from(line, 'utf8'));
      return buffer.readMessage();
    },
  };
}

/** What the SDK's own buffer makes of a line: the reference for every line that does not qualify. */
function asTheSdkReads(line: string): unknown {
  const sdk = new ReadBuffer();
  sdk.append(Buffer.from(line, 'utf8'));
  return sdk.readMessage();
}

describe('LongTexts', () => {
  it('keeps the long text of an answer to a pending read as the token the server wrote, behind a marker, taken once', () => {
    const { texts, read } = reader();
    texts.sent({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'ui://a/app.html' } });
    const message = read(readAnswer(3, `${item(WRITTEN)},${item('"small"')}`)) as { result: { contents: { text: string }[] } };
    const [long, small] = message.result.contents;
    expect(small.text).toBe('small');
    expect(long.text).toMatch(/^apphost-long-text:/);
    const literal = texts.take(long.text) as JsonStringLiteral;
    expect(literal.bytes.toString('utf8')).toBe(WRITTEN);
    expect(literal.decode()).toBe(LONG);
    expect(literal.utf8Bytes).toBe(Buffer.byteLength(LONG, 'utf8'));
    expect(() => texts.take(long.text)).toThrow('no longer held');
    expect(texts.take('any text a server sends')).toBeUndefined();
  });

  it('reads every other line whole, as the SDK does: no pending read, a cancelled one, another answer, a long string elsewhere', () => {
    const lines: [string, (texts: LongTexts) => void][] = [
      [readAnswer(4, item(WRITTEN)), () => undefined],
      [
        readAnswer(5, item(WRITTEN)),
        (t) => (t.sent({ id: 5, method: 'resources/read' }), t.sent({ method: 'notifications/cancelled', params: { requestId: 5 } })),
      ],
      [`{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":${WRITTEN}}]}}\n`, (t) => t.sent({ id: 6, method: 'tools/call' })],
      [readAnswer(7, item(WRITTEN, `,"_meta":{"note":${WRITTEN}}`)), (t) => t.sent({ id: 7, method: 'resources/read' })],
      [readAnswer(8, `${item('"a"', `,${WRITTEN}:1`)}`), (t) => t.sent({ id: 8, method: 'resources/read' })],
      [readAnswer(9, `${item(WRITTEN, `,"text":"duplicate key"`)}`), (t) => t.sent({ id: 9, method: 'resources/read' })],
      [`{"jsonrpc":"2.0","id":10,"method":"echo","params":{"text":${WRITTEN}}}\n`, (t) => t.sent({ id: 10, method: 'resources/read' })],
    ];
    for (const [line, before] of lines) {
      const { texts, read } = reader();
      before(texts);
      expect(read(line)).toEqual(asTheSdkReads(line));
    }
  });

  it('reads a long string that is not a well-formed JSON string of UTF-8 as the SDK does (bytes replaced, or the line skipped)', () => {
    const [head, tail] = readAnswer(11, item('"@"')).split('@');
    const invalidUtf8 = Buffer.concat([Buffer.from(`${head}${'x'.repeat(LONG_TEXT_BYTES)}`), Buffer.from([0xff]), Buffer.from(tail)]);
    const { texts, buffer } = reader();
    texts.sent({ id: 11, method: 'resources/read' });
    buffer.append(invalidUtf8);
    const sdk = new ReadBuffer();
    sdk.append(invalidUtf8);
    const ours = buffer.readMessage() as unknown as { result: { contents: { text: string }[] } };
    expect(ours).toEqual(sdk.readMessage());
    expect(ours.result.contents[0].text.endsWith('x\ufffd')).toBe(true);

    const unknownEscape = readAnswer(12, item(`"${'x'.repeat(LONG_TEXT_BYTES)}\\q"`)); // `\q` is no JSON escape
    const second = reader();
    second.texts.sent({ id: 12, method: 'resources/read' });
    expect(second.read(unknownEscape)).toBeNull(); // not JSON: skipped, as the SDK skips it
    expect(asTheSdkReads(unknownEscape)).toBeNull();
  });

  it('answers end their request: a later line with the same id is read whole', () => {
    const { texts, read } = reader();
    texts.sent({ id: 13, method: 'resources/read' });
    read(readAnswer(13, item('"short"')));
    const line = readAnswer(13, item(WRITTEN));
    expect(read(line)).toEqual(asTheSdkReads(line));
  });

  it('holds at most 64 texts: an answer nobody took is let go, and taking its marker then throws', () => {
    const { texts, read } = reader();
    const markers: string[] = [];
    for (let id = 100; id < 166; id++) {
      texts.sent({ id, method: 'resources/read' });
      markers.push((read(readAnswer(id, item(WRITTEN))) as { result: { contents: { text: string }[] } }).result.contents[0].text);
    }
    expect(() => texts.take(markers[0])).toThrow('no longer held');
    expect(() => texts.take(markers[1])).toThrow('no longer held');
    expect(texts.take(markers[65])?.decode()).toBe(LONG);
    texts.clear();
    expect(() => texts.take(markers[64])).toThrow('no longer held');
  });
});
