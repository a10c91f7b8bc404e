import { canonicalize, CanonicalJsonError, type CanonicalLimits } from '@apphost/canonical-json';
import { AppHostError, GovernedReasons } from '@apphost/contracts';

/**
 * The bounds a call's arguments must fit: the same canonicalizer seals them later (refresh record, confirmation
 * permit), so what passes here can always be sealed.
 */
export const ARGUMENT_LIMITS: CanonicalLimits = Object.freeze({ maxBytes: 256 * 1024, maxDepth: 32 });

/**
 * Admission of a model tool batch's arguments, before any effect (the gateway checks the HTTP body with it, before
 * the bus codec could turn a non-finite number into `null`; governed-operations checks again at admission): each call's arguments must be canonical I-JSON within
 * `ARGUMENT_LIMITS` (no lone surrogate, no non-finite or unsafe number, not too deep, not too big). Otherwise the
 * whole batch is INVALID_ARGUMENT (`ARGUMENTS_NOT_CANONICAL`) and nothing runs.
 */
export function admitArguments(calls: readonly { functionCallId?: string; arguments?: Record<string, unknown> }[]): void {
  calls.forEach((call, index) => {
    try {
      canonicalize(call.arguments ?? {}, ARGUMENT_LIMITS);
    } catch (error) {
      if (!(error instanceof CanonicalJsonError)) throw error;
      throw new AppHostError('INVALID_ARGUMENT', `the arguments of call ${index} are not canonical JSON: ${error.message}`, {
        details: GovernedReasons.details('ARGUMENTS_NOT_CANONICAL', {
          index,
          ...(call.functionCallId !== undefined ? { functionCallId: call.functionCallId } : {}),
          canonical: error.details,
        }),
      });
    }
  });
}
