import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
/** Ids drawn per CSPRNG call: a synchronous `randomBytes(16)` costs ~5 µs, most of it the call itself. */
const POOL = Buffer.allocUnsafe(ID_BYTES * 256);
let offset = POOL.length;

/**
 * 16 bytes from the CSPRNG as base64url (22 chars): record and upload ids. The bytes come from a pooled buffer
 * refilled 256 ids at a time (as `crypto.randomUUID` does); each byte is handed out once.
 */
export function randomId(): string {
  if (offset === POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const id = POOL.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}
