import { documentUiMeta } from './ui-meta';

describe('documentUiMeta', () => {
  it('prefers the content item per key and falls back to the listing entry', () => {
    const item = { csp: { connectDomains: ['https://a.example.com'] }, prefersBorder: false };
    const listing = {
      csp: { connectDomains: ['https://b.example.com'], resourceDomains: ['https://cdn.example.com'] },
      permissions: { camera: {} },
      domain: 'x',
    };
    expect(documentUiMeta(item, listing)).toEqual({
      csp: { connectDomains: ['https://a.example.com'] },
      prefersBorder: false,
      permissions: { camera: {} },
      domain: 'x',
    });
  });

  it('uses whichever side is an object; neither → {}', () => {
    const meta = { prefersBorder: true };
    expect(documentUiMeta(meta, undefined)).toEqual(meta);
    expect(documentUiMeta(undefined, meta)).toEqual(meta);
    expect(documentUiMeta('x', meta)).toEqual(meta);
    expect(documentUiMeta(meta, [1, 2])).toEqual(meta);
    expect(documentUiMeta(null, 7)).toEqual({});
  });

  it('returns a new object and mutates neither input', () => {
    const item = { a: 1 };
    const listing = { b: 2 };
    const merged = documentUiMeta(item, listing);
    merged['c'] = 3;
    expect(item).toEqual({ a: 1 });
    expect(listing).toEqual({ b: 2 });
    expect(documentUiMeta(item, undefined)).not.toBe(item);
  });

  it('copies a JSON __proto__ key as data, never as a prototype', () => {
    const merged = documentUiMeta(JSON.parse('{"__proto__": {"polluted": true}}'), undefined);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
