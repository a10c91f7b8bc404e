import { Readable } from 'node:stream';
import { spliceMarker, splicedJson } from './spliced-json';

async function bodyOf(file: ReturnType<typeof splicedJson>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of file.getStream() as Readable) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8');
}

describe('splicedJson', () => {
  it('sends the value as JSON with the literal bytes where the marker was, as they are, with their length and type', async () => {
    const marker = spliceMarker();
    const literal = Buffer.from('"\\u00e9 as the server wrote it \\"q\\""', 'utf8');
    const file = splicedJson({ a: 1, nested: { html: marker, after: 'é' }, list: [marker.slice(1)] }, { marker, literal });
    const body = await bodyOf(file);
    expect(JSON.parse(body)).toEqual({ a: 1, nested: { html: 'é as the server wrote it "q"', after: 'é' }, list: [marker.slice(1)] });
    expect(body).toContain(literal.toString('utf8'));
    expect(file.getHeaders()).toEqual({ type: 'application/json; charset=utf-8', disposition: undefined, length: Buffer.byteLength(body, 'utf8') });
  });

  it('refuses a value where the marker is missing or occurs twice', () => {
    const marker = spliceMarker();
    const splice = { marker, literal: Buffer.from('"x"') };
    expect(() => splicedJson({ html: 'no marker' }, splice)).toThrow('exactly once');
    expect(() => splicedJson({ html: marker, again: marker }, splice)).toThrow('exactly once');
  });

  it('draws a new marker for every answer', () => {
    expect(spliceMarker()).not.toBe(spliceMarker());
  });
});
