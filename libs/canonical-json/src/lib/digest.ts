import { createHash } from 'node:crypto';
import { canonicalize, type CanonicalLimits } from './canonicalize';
import { CanonicalJsonError } from './errors';

/** What a digest is for. Closed so that a digest made for one purpose can never be replayed as another. */
export const DIGEST_PURPOSES = ['sealed-result', 'confirmation-arguments', 'binding-revision', 'replay-identity', 'tool-definition'] as const;
export type DigestPurpose = (typeof DIGEST_PURPOSES)[number];

/** Version tag of the envelope; changing the envelope format means changing this, never reusing it. */
const ENVELOPE_TAG = 'apphost.digest.v1';

/**
 * Lowercase hex SHA-256 of the UTF-8 bytes of `"apphost.digest.v1\n" + purpose + "\n" + canonicalize(value)`.
 * Purposes contain no newline, so the envelope parses back unambiguously: different purposes or values can
 * never produce the same hashed bytes. `limits` apply to the canonical value, not to the envelope.
 */
export function canonicalDigest(purpose: DigestPurpose | string, value: unknown, limits?: Partial<CanonicalLimits>): string {
  if (!(DIGEST_PURPOSES as readonly unknown[]).includes(purpose)) {
    throw new CanonicalJsonError('unknown-purpose', '', `unknown digest purpose ${JSON.stringify(String(purpose))}`);
  }
  const body = canonicalize(value, limits);
  return createHash('sha256').update(`${ENVELOPE_TAG}\n${purpose}\n`, 'utf8').update(body, 'utf8').digest('hex');
}
