import { AppHostError, type ErrorCode } from '@apphost/contracts';
import { CanonicalJsonError, type CanonicalJsonErrorReason } from './errors';

/** Runs `fn`, asserting it throws a CanonicalJsonError with exactly this code, reason and path. */
export function expectCanonicalError(fn: () => unknown, expected: { reason: CanonicalJsonErrorReason; path: string; code?: ErrorCode }): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(CanonicalJsonError);
  expect(caught).toBeInstanceOf(AppHostError);
  const error = caught as CanonicalJsonError;
  expect(error.name).toBe('CanonicalJsonError');
  expect(error.code).toBe(expected.code ?? (expected.reason === 'max-bytes' ? 'PAYLOAD_TOO_LARGE' : 'INVALID_ARGUMENT'));
  expect(error.details).toEqual({ reason: expected.reason, path: expected.path });
}

/** The double whose IEEE 754 bit pattern is `hex` (16 hex digits), as RFC 8785 Appendix B lists them. */
export function doubleFromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}
