import { createHash, hash, timingSafeEqual } from 'node:crypto';

/**
 * The store-private content digest. It is exactly `canonicalDigest('sealed-result', envelope)` from
 * @apphost/canonical-json (a unit test pins the equality), computed over the canonical bytes as stored, so
 * verification on resolve hashes the very bytes it is about to release instead of re-canonicalizing them.
 */
const SEALED_DIGEST_PREFIX = Buffer.from('apphost.digest.v1\nsealed-result\n', 'utf8');

export function sealedDigest(canonicalBytes: Buffer): Buffer {
  return createHash('sha256').update(SEALED_DIGEST_PREFIX).update(canonicalBytes).digest();
}

/** SHA-256 of each `chunkBytes` slice, concatenated (32 bytes per chunk): lets one chunk be verified alone. */
export function chunkDigests(canonicalBytes: Buffer, chunkBytes: number): Buffer {
  const count = Math.ceil(canonicalBytes.length / chunkBytes);
  if (count === 1) return chunkDigest(canonicalBytes);
  const out = Buffer.allocUnsafe(32 * count);
  for (let i = 0; i < count; i++) chunkDigest(canonicalBytes.subarray(i * chunkBytes, (i + 1) * chunkBytes)).copy(out, 32 * i);
  return out;
}

/** One-shot SHA-256 (no Hash object: a third cheaper for the small envelopes of the create path). */
export function chunkDigest(chunk: Buffer): Buffer {
  return hash('sha256', chunk, 'buffer');
}

export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
