import { z } from 'zod';

/** `apphost.<service>.transfer.<instanceId>.<life>.read-chunk.v1`: the one server process that holds the bytes. */
const HOLDER_SUBJECT = /^apphost\.[A-Za-z0-9_.-]+\.transfer\.[A-Za-z0-9_-]{1,64}\.[0-9a-f]{12}\.read-chunk\.v1$/;

/**
 * Bytes one service process holds for a short while and serves in chunks on its transfer subject: a reply too large
 * for one bus message, or a document handed on by reference so the services between producer and consumer never
 * carry it. Whoever fetches it gets exactly `totalBytes` whose SHA-256 is `sha256`, or a typed DATA_LOSS; the
 * holder frees the bytes once every chunk was read, or when they expire.
 */
export const byteReferenceSchema = z.strictObject({
  transferId: z.uuid(),
  totalBytes: z.number().int().positive(),
  chunkBytes: z.number().int().positive(),
  /** SHA-256 of the whole, lower-case hex. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  subject: z.string().regex(HOLDER_SUBJECT),
});
export type ByteReference = z.infer<typeof byteReferenceSchema>;
