import { AppHostError, SealedReasons } from '@apphost/contracts';

/** Chunk arithmetic and assembly for envelopes that do not fit one bus message. Pure: no I/O. */

export function chunkCountOf(totalBytes: number, chunkBytes: number): number {
  return Math.ceil(totalBytes / chunkBytes);
}

/** Byte length chunk `index` must have: `chunkBytes`, except the last one (the remainder). */
export function expectedChunkBytes(totalBytes: number, chunkBytes: number, index: number): number {
  return Math.max(0, Math.min(chunkBytes, totalBytes - index * chunkBytes));
}

export function sliceChunk(bytes: Buffer, chunkBytes: number, index: number): Buffer {
  return bytes.subarray(index * chunkBytes, (index + 1) * chunkBytes);
}

/** Decodes strict base64 (the contract already checked the alphabet); the size check happens against the upload. */
export function decodeChunk(data: string): Buffer {
  return Buffer.from(data, 'base64');
}

export function encodeChunk(bytes: Buffer): string {
  return bytes.toString('base64');
}

/**
 * Joins staged chunks into the declared byte string: every index present exactly once, each of its declared size,
 * the total exactly as declared at begin. Anything else is FAILED_PRECONDITION (UPLOAD_INCOMPLETE), nothing stored.
 */
export function assembleChunks(chunks: { index: number; data: Buffer }[], totalBytes: number, chunkBytes: number): Buffer {
  const count = chunkCountOf(totalBytes, chunkBytes);
  const incomplete = (why: string) =>
    new AppHostError('FAILED_PRECONDITION', `the upload is incomplete: ${why}`, {
      details: SealedReasons.details('UPLOAD_INCOMPLETE', { expectedChunks: count, received: chunks.length }),
    });
  if (chunks.length !== count) throw incomplete(`${chunks.length} of ${count} chunks staged`);
  chunks.forEach((c, i) => {
    if (c.index !== i) throw incomplete(`chunk ${i} is missing`);
    if (c.data.length !== expectedChunkBytes(totalBytes, chunkBytes, i)) throw incomplete(`chunk ${i} has the wrong size`);
  });
  return Buffer.concat(
    chunks.map((c) => c.data),
    totalBytes,
  );
}

/** Parses assembled bytes as strict UTF-8 JSON; anything else is INVALID_ARGUMENT before any record is written. */
export function parseAssembledJson(bytes: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new AppHostError('INVALID_ARGUMENT', 'the uploaded envelope is not valid UTF-8', { details: SealedReasons.details('ENVELOPE_INVALID') });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new AppHostError('INVALID_ARGUMENT', 'the uploaded envelope is not valid JSON', { details: SealedReasons.details('ENVELOPE_INVALID') });
  }
}
