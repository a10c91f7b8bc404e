import type { ByteReference } from '@apphost/contracts';
import { JsonStringLiteral } from '@apphost/mcp';
import { referenceLargeTexts } from './text-references';

describe('referenceLargeTexts', () => {
  const held: Buffer[] = [];
  const hold = (_label: string, bytes: Uint8Array): ByteReference => {
    held.push(Buffer.from(bytes));
    return { transferId: '00000000-0000-4000-8000-000000000000', totalBytes: bytes.byteLength, chunkBytes: 512, sha256: '0'.repeat(64), subject: 's' };
  };
  const literalOf = (text: string) => JsonStringLiteral.of(Buffer.from(JSON.stringify(text), 'utf8'))!;
  beforeEach(() => (held.length = 0));

  it('replaces a text of at least the threshold in UTF-8 bytes by a reference to its JSON literal and its length, keeping the rest', () => {
    const text = 'é"'.repeat(400); // 1200 UTF-8 bytes, 800 UTF-16 units
    const [item] = referenceLargeTexts([{ uri: 'ui://a', mimeType: 'text/html', text, _meta: { ui: {} } }], 1200, hold);
    expect(item).toEqual({
      uri: 'ui://a',
      mimeType: 'text/html',
      _meta: { ui: {} },
      textLiteralReference: expect.objectContaining({ totalBytes: held[0].length }),
      textBytes: 1200,
    });
    expect(held[0].toString('utf8')).toBe(JSON.stringify(text));
  });

  it('holds a long text read as the server wrote it (textLiteral) byte for byte, and references a lone surrogate exactly', () => {
    const written = Buffer.from(`"${'\\u00e9'.repeat(600)}\\ud800"`, 'utf8'); // not how JSON.stringify writes it
    const [item] = referenceLargeTexts([{ uri: 'ui://a', textLiteral: JsonStringLiteral.of(written)! }], 1200, hold);
    expect(item).toEqual({ uri: 'ui://a', textLiteralReference: expect.any(Object), textBytes: 1203 });
    expect(held[0].equals(written)).toBe(true);
  });

  it('gives a held literal below the threshold, or beside a blob, back as its text', () => {
    const small = 'é'.repeat(599);
    const items = [
      { uri: 'ui://small', textLiteral: literalOf(small) },
      { uri: 'ui://both', textLiteral: literalOf('x'.repeat(4000)), blob: 'eA==' },
    ];
    expect(referenceLargeTexts(items, 1200, hold)).toEqual([
      { uri: 'ui://small', text: small },
      { uri: 'ui://both', text: 'x'.repeat(4000), blob: 'eA==' },
    ]);
    expect(held).toHaveLength(0);
  });

  it('leaves as they are: a smaller text, a blob, an item with both', () => {
    const items = [
      { uri: 'ui://small', text: 'é'.repeat(599) },
      { uri: 'ui://blob', blob: Buffer.alloc(4000).toString('base64') },
      { uri: 'ui://both', text: 'x'.repeat(4000), blob: 'eA==' },
    ];
    expect(referenceLargeTexts(items, 1200, hold)).toEqual(items);
    expect(held).toHaveLength(0);
  });
});
