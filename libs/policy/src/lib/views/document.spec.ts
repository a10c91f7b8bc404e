import { AppHostError } from '@apphost/contracts';
import { APP_DOCUMENT_MIME_TYPE, appDocumentHtmlOf, isAppDocumentMimeType, selectAppDocument } from './document';

const URI = 'ui://apps.example/widget.html';
const HTML = '<!doctype html><html><body>caf\u00e9 \u{1F600}</body></html>';
const HTML_BYTES = Buffer.byteLength(HTML, 'utf8');
const expected = { resourceUri: URI, maxBytes: 1024 };

function item(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { uri: URI, mimeType: APP_DOCUMENT_MIME_TYPE, text: HTML, ...extra };
}

function failure(run: () => unknown): { code: string; reason: unknown; details: Record<string, unknown> | undefined } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppHostError);
    const e = error as AppHostError;
    return { code: e.code, reason: e.details?.['reason'], details: e.details };
  }
  throw new Error('expected selectAppDocument to throw');
}

describe('selectAppDocument', () => {
  it('selects a document held by reference by its size, keeping the reference; refuses it beside text or blob, malformed, or too large', () => {
    const htmlLiteralReference = {
      transferId: '3b241101-e2bb-4255-8caf-4136c566a962',
      totalBytes: 900,
      chunkBytes: 524288,
      sha256: 'b'.repeat(64),
      subject: 'apphost.binding-registry.transfer.reg-1.0123456789ab.read-chunk.v1',
    };
    // The literal (quotes, escapes) is longer than the text it holds: the size judged is the text's (`textBytes`).
    const referenced = item({ text: undefined, textLiteralReference: htmlLiteralReference, textBytes: 880, _meta: { ui: {} } });
    expect(selectAppDocument([referenced], expected)).toEqual({ htmlLiteralReference, bytes: 880, itemMeta: { ui: {} } });
    expect(failure(() => selectAppDocument([{ ...referenced, text: HTML }], expected)).reason).toBe('DOCUMENT_ENCODING_INVALID');
    for (const malformed of [
      { textLiteralReference: { totalBytes: 900 } },
      { textBytes: undefined },
      { textBytes: -1 },
      { textBytes: 1.5 },
      { textBytes: 899 },
    ])
      expect(failure(() => selectAppDocument([{ ...referenced, ...malformed }], expected)).reason).toBe('DOCUMENT_ENCODING_INVALID');
    expect(selectAppDocument([referenced], { ...expected, maxBytes: 880 }).bytes).toBe(880);
    expect(failure(() => selectAppDocument([referenced], { ...expected, maxBytes: 879 }))).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      reason: 'DOCUMENT_TOO_LARGE',
    });
  });

  it('selects the one text item of the expected URI and App type, ignoring items of other URIs', () => {
    const contents = [
      { uri: 'ui://apps.example/other.html', mimeType: APP_DOCUMENT_MIME_TYPE, text: 'other' },
      item({ _meta: { ui: { prefersBorder: true } } }),
      { uri: 'ui://apps.example/widget.html/x', mimeType: APP_DOCUMENT_MIME_TYPE, text: 'nested' },
      { uri: 7, mimeType: APP_DOCUMENT_MIME_TYPE, text: 'no uri' },
      { uri: 'ui://apps.example/../widget.html', mimeType: APP_DOCUMENT_MIME_TYPE, text: 'not canonicalizable' },
    ];
    expect(selectAppDocument(contents, expected)).toEqual({ html: HTML, bytes: HTML_BYTES, itemMeta: { ui: { prefersBorder: true } } });
  });

  it('compares canonical URIs (case of scheme and host, escapes, fragment)', () => {
    const contents = [item({ uri: 'UI://Apps.Example/%77idget.html#top' })];
    expect(selectAppDocument(contents, expected).html).toBe(HTML);
    expect(selectAppDocument([item()], { ...expected, resourceUri: 'ui://APPS.example/widget.html' }).html).toBe(HTML);
  });

  it('gives itemMeta undefined when the item has no object _meta', () => {
    expect(selectAppDocument([item()], expected).itemMeta).toBeUndefined();
    expect(selectAppDocument([item({ _meta: 'x' })], expected).itemMeta).toBeUndefined();
    expect(selectAppDocument([item({ _meta: [1] })], expected).itemMeta).toBeUndefined();
  });

  it('decodes a base64 blob as UTF-8, byte for byte (a BOM is kept)', () => {
    const blob = Buffer.from(HTML, 'utf8').toString('base64');
    expect(selectAppDocument([item({ text: undefined, blob })], expected)).toEqual({ html: HTML, bytes: HTML_BYTES, itemMeta: undefined });
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(HTML, 'utf8')]).toString('base64');
    const selected = selectAppDocument([item({ text: undefined, blob: withBom })], expected);
    expect(selected.html).toBe(`\ufeff${HTML}`);
    expect(selected.bytes).toBe(HTML_BYTES + 3);
  });

  it('zero items → DOCUMENT_NOT_FOUND; only other URIs → DOCUMENT_NOT_FOUND', () => {
    expect(failure(() => selectAppDocument([], expected))).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'DOCUMENT_NOT_FOUND' });
    const wrongUri = [item({ uri: 'ui://apps.example/widget.htm' }), item({ uri: 'ui://other.example/widget.html' })];
    expect(failure(() => selectAppDocument(wrongUri, expected))).toEqual({
      code: 'FAILED_PRECONDITION',
      reason: 'DOCUMENT_NOT_FOUND',
      details: { reason: 'DOCUMENT_NOT_FOUND', resourceUri: URI },
    });
  });

  it('two App documents of the URI → DOCUMENT_AMBIGUOUS (also when one is written differently)', () => {
    expect(failure(() => selectAppDocument([item(), item({ text: 'second' })], expected))).toEqual({
      code: 'FAILED_PRECONDITION',
      reason: 'DOCUMENT_AMBIGUOUS',
      details: { reason: 'DOCUMENT_AMBIGUOUS', resourceUri: URI, count: 2 },
    });
    expect(failure(() => selectAppDocument([item(), item({ uri: 'UI://apps.example/widget.html' })], expected)).reason).toBe('DOCUMENT_AMBIGUOUS');
  });

  it('the URI with another type → DOCUMENT_MIME_MISMATCH; a wrong-type item beside the one document is ignored', () => {
    const contents = [item({ mimeType: 'text/html' }), item({ mimeType: undefined })];
    expect(failure(() => selectAppDocument(contents, expected))).toEqual({
      code: 'FAILED_PRECONDITION',
      reason: 'DOCUMENT_MIME_MISMATCH',
      details: { reason: 'DOCUMENT_MIME_MISMATCH', resourceUri: URI, mimeTypes: ['text/html', null] },
    });
    expect(selectAppDocument([item({ mimeType: 'text/html', text: 'plain' }), item()], expected).html).toBe(HTML);
  });

  it.each([
    ['bad alphabet', { text: undefined, blob: 'PGh0bWw+!!!!' }],
    ['URL alphabet', { text: undefined, blob: Buffer.from('<b>??></b>').toString('base64url') }],
    ['missing padding', { text: undefined, blob: 'PGI+' + 'YQ' }],
    ['embedded newline', { text: undefined, blob: 'PGI+\nYQ==' }],
    ['non-zero pad bits', { text: undefined, blob: 'YR==' }],
    ['not UTF-8', { text: undefined, blob: Buffer.from([0x3c, 0xff, 0xfe, 0x3e]).toString('base64') }],
    ['blob not a string', { text: undefined, blob: 12 }],
    ['text not a string', { text: 12 }],
    ['neither text nor blob', { text: undefined }],
    ['both text and blob', { blob: Buffer.from(HTML).toString('base64') }],
  ])('%s → DOCUMENT_ENCODING_INVALID', (_case, extra) => {
    expect(failure(() => selectAppDocument([item(extra)], expected))).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'DOCUMENT_ENCODING_INVALID' });
  });

  it('over maxBytes (UTF-8 bytes, text or decoded blob) → PAYLOAD_TOO_LARGE DOCUMENT_TOO_LARGE; exactly maxBytes passes', () => {
    const blob = Buffer.from(HTML, 'utf8').toString('base64');
    const exact = { resourceUri: URI, maxBytes: HTML_BYTES };
    const under = { resourceUri: URI, maxBytes: HTML_BYTES - 1 };
    expect(selectAppDocument([item()], exact).bytes).toBe(HTML_BYTES);
    expect(selectAppDocument([item({ text: undefined, blob })], exact).bytes).toBe(HTML_BYTES);
    expect(HTML.length).toBeLessThan(HTML_BYTES - 1);
    for (const candidate of [item(), item({ text: undefined, blob })]) {
      expect(failure(() => selectAppDocument([candidate], under))).toEqual({
        code: 'PAYLOAD_TOO_LARGE',
        reason: 'DOCUMENT_TOO_LARGE',
        details: { reason: 'DOCUMENT_TOO_LARGE', resourceUri: URI, bytes: HTML_BYTES, maxBytes: HTML_BYTES - 1 },
      });
    }
  });

  it('checks the size of a blob of every padding length', () => {
    for (const text of ['<p>', '<p>a', '<p>ab']) {
      const blob = Buffer.from(text).toString('base64');
      expect(selectAppDocument([item({ text: undefined, blob })], { resourceUri: URI, maxBytes: text.length }).html).toBe(text);
      expect(failure(() => selectAppDocument([item({ text: undefined, blob })], { resourceUri: URI, maxBytes: text.length - 1 })).reason).toBe(
        'DOCUMENT_TOO_LARGE',
      );
    }
  });
});

describe('isAppDocumentMimeType', () => {
  it.each([
    ['text/html;profile=mcp-app', true],
    ['text/html; profile=mcp-app', true],
    ['text/html ;profile=mcp-app', true],
    ['Text/HTML;Profile=mcp-app', true],
    ['text/html;profile="mcp-app"', true],
    ['text/html;profile=MCP-APP', false],
    ['text/html', false],
    ['text/html;profile=mcp-app;charset=utf-8', false],
    ['text/html;charset=utf-8;profile=mcp-app', false],
    ['text/html;profile=mcp-app-x', false],
    ['text/html;profile= mcp-app', false],
    ['text/plain;profile=mcp-app', false],
    ['text/html;profile=mcp-app\n', false],
    ['', false],
    [undefined, false],
    [7, false],
  ])('%j → %s', (mimeType, accepted) => {
    expect(isAppDocumentMimeType(mimeType)).toBe(accepted);
  });
});

describe('appDocumentHtmlOf', () => {
  it('decodes well-formed UTF-8 exactly (a BOM kept), also from a view into a larger buffer', () => {
    const html = '\uFEFF<p>Grüße 😀 \u2028</p>';
    expect(appDocumentHtmlOf(Buffer.from(html))).toBe(html);
    const framed = Buffer.concat([Buffer.from([0xff, 0xff]), Buffer.from(html), Buffer.from([0xff])]);
    expect(appDocumentHtmlOf(framed.subarray(2, framed.length - 1))).toBe(html);
    expect(appDocumentHtmlOf(new Uint8Array(0))).toBe('');
  });

  it.each([
    ['a stray continuation byte', [0x3c, 0x80, 0x3e]],
    ['an overlong encoding', [0xc0, 0xbc]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0x3c, 0xe2, 0x82]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ])('%s → null', (_case, bytes) => {
    expect(appDocumentHtmlOf(Uint8Array.from(bytes))).toBeNull();
  });
});
