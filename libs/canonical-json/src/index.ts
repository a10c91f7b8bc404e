export { canonicalize, DEFAULT_CANONICAL_LIMITS, type CanonicalLimits } from './lib/canonicalize';
export { canonicalDigest, DIGEST_PURPOSES, type DigestPurpose } from './lib/digest';
export { CanonicalJsonError, type CanonicalJsonErrorDetails, type CanonicalJsonErrorReason } from './lib/errors';
