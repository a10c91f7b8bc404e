import { AppHostError, type ErrorCode } from '@apphost/contracts';

/**
 * Awaits `work` (a promise, or a function that throws or returns one), which must fail with an AppHostError;
 * checks its `code` and `details.reason` when given, and returns the error for further assertions.
 */
export async function expectAppError(work: Promise<unknown> | (() => unknown), code?: ErrorCode, reason?: string): Promise<AppHostError> {
  let caught: unknown;
  let settled = false;
  try {
    await (typeof work === 'function' ? work() : work);
    settled = true;
  } catch (error) {
    caught = error;
  }
  if (settled) throw new Error(`expected an AppHostError${code ? ` ${code}` : ''}, got success`);
  if (!(caught instanceof AppHostError)) throw new Error(`expected an AppHostError${code ? ` ${code}` : ''}, got ${String(caught)}`);
  if (code !== undefined) expect({ code: caught.code, reason: reason === undefined ? undefined : caught.details?.['reason'] }).toEqual({ code, reason });
  return caught;
}
