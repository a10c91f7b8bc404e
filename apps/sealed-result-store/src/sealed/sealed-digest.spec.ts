import { canonicalDigest, canonicalize } from '@apphost/canonical-json';
import { SEALED_CHUNK_BYTES } from '@apphost/contracts';
import { assembleChunks, chunkCountOf, expectedChunkBytes, parseAssembledJson, sliceChunk } from './chunked-transfer';
import { chunkDigest, chunkDigests, sameDigest, sealedDigest } from './sealed-digest';
import { envelopeFor, largeEnvelope } from '../test/fixtures';

describe('sealed digest', () => {
  it('equals canonicalDigest("sealed-result", envelope) over the stored canonical bytes', () => {
    for (const envelope of [envelopeFor('fc-1'), envelopeFor('fc-2', { ü: [1.5, -0, 'x'], a: null }), largeEnvelope('fc-3', 100_000)]) {
      const bytes = Buffer.from(canonicalize(envelope), 'utf8');
      expect(sealedDigest(bytes).toString('hex')).toBe(canonicalDigest('sealed-result', envelope));
    }
  });

  it('changes with any flipped bit', () => {
    const bytes = Buffer.from(canonicalize(envelopeFor('fc')), 'utf8');
    const digest = sealedDigest(bytes);
    for (const at of [0, 1, bytes.length >> 1, bytes.length - 1]) {
      const flipped = Buffer.from(bytes);
      flipped[at] ^= 0x20;
      expect(sameDigest(sealedDigest(flipped), digest)).toBe(false);
    }
    expect(sameDigest(sealedDigest(Buffer.from(bytes)), digest)).toBe(true);
  });

  it('keeps one 32-byte digest per chunk, each verifying its slice alone', () => {
    const bytes = Buffer.from(canonicalize(largeEnvelope('fc', 3 * SEALED_CHUNK_BYTES + 10)), 'utf8');
    const count = chunkCountOf(bytes.length, SEALED_CHUNK_BYTES);
    const digests = chunkDigests(bytes, SEALED_CHUNK_BYTES);
    expect(digests).toHaveLength(32 * count);
    for (let i = 0; i < count; i++) {
      expect(sameDigest(chunkDigest(sliceChunk(bytes, SEALED_CHUNK_BYTES, i)), digests.subarray(32 * i, 32 * (i + 1)))).toBe(true);
    }
  });
});

describe('chunked transfer', () => {
  it('computes chunk counts and sizes, the last chunk carrying the remainder', () => {
    expect(chunkCountOf(1, 4)).toBe(1);
    expect(chunkCountOf(8, 4)).toBe(2);
    expect(chunkCountOf(9, 4)).toBe(3);
    expect([0, 1, 2, 3].map((i) => expectedChunkBytes(9, 4, i))).toEqual([4, 4, 1, 0]);
  });

  it('assembles exactly the declared bytes and refuses gaps, wrong sizes and missing chunks', () => {
    const data = Buffer.from('abcdefghi');
    const chunks = [0, 1, 2].map((index) => ({ index, data: sliceChunk(data, 4, index) }));
    expect(assembleChunks(chunks, 9, 4).equals(data)).toBe(true);
    expect(() => assembleChunks(chunks.slice(0, 2), 9, 4)).toThrow(
      expect.objectContaining({ code: 'FAILED_PRECONDITION', details: expect.objectContaining({ reason: 'UPLOAD_INCOMPLETE' }) }),
    );
    expect(() => assembleChunks([chunks[0], chunks[2], { index: 3, data: Buffer.from('x') }], 9, 4)).toThrow(/chunk 1 is missing/);
    expect(() => assembleChunks([chunks[0], chunks[1], { index: 2, data: Buffer.from('ij') }], 9, 4)).toThrow(/wrong size/);
  });

  it('accepts only strict UTF-8 JSON', () => {
    expect(parseAssembledJson(Buffer.from('{"a":[1,"é"]}'))).toEqual({ a: [1, 'é'] });
    expect(() => parseAssembledJson(Buffer.from([0x7b, 0xff, 0x7d]))).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', details: { reason: 'ENVELOPE_INVALID' } }),
    );
    expect(() => parseAssembledJson(Buffer.from('{"a":'))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
