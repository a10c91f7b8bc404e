import { AppHostError } from '@apphost/contracts';

/** Why a value was refused. A closed set so callers (and tests) can branch on it without parsing messages. */
export type CanonicalJsonErrorReason =
  | 'non-finite-number'
  | 'unsafe-integer'
  | 'undefined'
  | 'function'
  | 'symbol'
  | 'bigint'
  | 'non-plain-object'
  | 'cycle'
  | 'lone-surrogate'
  | 'max-depth'
  | 'max-bytes'
  | 'unknown-purpose';

/** `path` is an RFC 6901 JSON Pointer to the offending value: `''` is the root, `/a/0/b` a nested member. */
export type CanonicalJsonErrorDetails = { reason: CanonicalJsonErrorReason; path: string };

const DESCRIPTIONS: Readonly<Record<CanonicalJsonErrorReason, string>> = {
  'non-finite-number': 'NaN and Infinity have no JSON form',
  'unsafe-integer': 'integer value outside ±(2^53 − 1) is not I-JSON',
  undefined: 'undefined (or an array hole) has no JSON form',
  function: 'functions have no JSON form',
  symbol: 'symbols (as values or keys) have no JSON form',
  bigint: 'bigint has no I-JSON form',
  'non-plain-object': 'only arrays and plain objects are allowed',
  cycle: 'cyclic reference',
  'lone-surrogate': 'string contains a lone UTF-16 surrogate',
  'max-depth': 'nesting exceeds maxDepth',
  'max-bytes': 'canonical form exceeds maxBytes',
  'unknown-purpose': 'unknown digest purpose',
};

/**
 * Raised for any value outside the canonicalizable I-JSON domain. The code is derived from the reason so the
 * two can never disagree: only the size limit is PAYLOAD_TOO_LARGE, everything else is INVALID_ARGUMENT.
 */
export class CanonicalJsonError extends AppHostError {
  declare readonly details: CanonicalJsonErrorDetails;

  constructor(reason: CanonicalJsonErrorReason, path: string, detail?: string) {
    const where = path === '' ? '(root)' : path;
    super(reason === 'max-bytes' ? 'PAYLOAD_TOO_LARGE' : 'INVALID_ARGUMENT', `Cannot canonicalize JSON at ${where}: ${detail ?? DESCRIPTIONS[reason]}`, {
      details: { reason, path },
    });
    this.name = 'CanonicalJsonError';
  }
}
