import type { ByteReference } from '@apphost/contracts';
import { referenceLargeTexts } from './text-references';

describe('referenceLargeTexts', () => {
  const held: Buffer[] = [];
  const hold = (_label: string, bytes: Uint8Array): ByteReference => {
    held.push(Buffer.from(bytes));
    return { transferId: '00000000-0000-4000-8000-000000000000', totalBytes: bytes.byteLength, chunkBytes: 512, sha256: '0'.repeat(64), subject: 's' };
  };
  beforeEach(() => (held.length = 0));

  it('replaces a text of at least the threshold in UTF-8 bytes by a reference to exactly those bytes, keeping the rest', () => {
    const text = 'é'.repeat(600); // 1200 UTF-8 bytes, 600 UTF-16 units
    const [item] = referenceLargeTexts([{ uri: 'ui://a', mimeType: 'text/html', text, _meta: { ui: {} } }], 1200, hold);
    expect(item).toEqual({ uri: 'ui://a', mimeType: 'text/html', _meta: { ui: {} }, textReference: expect.objectContaining({ totalBytes: 1200 }) });
    expect(held[0].toString('utf8')).toBe(text);
  });

  it('leaves as they are: a smaller text, a blob, an item with both, and a text with a lone surrogate', () => {
    const items = [
      { uri: 'ui://small', text: 'é'.repeat(599) },
      { uri: 'ui://blob', blob: Buffer.alloc(4000).toString('base64') },
      { uri: 'ui://both', text: 'x'.repeat(4000), blob: 'eA==' },
      { uri: 'ui://lone', text: `${'x'.repeat(4000)}\ud800` },
    ];
    expect(referenceLargeTexts(items, 1200, hold)).toEqual(items);
    expect(held).toHaveLength(0);
  });
});
