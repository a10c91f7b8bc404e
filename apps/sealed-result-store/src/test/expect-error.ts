import { AppHostError, type ErrorCode } from '@apphost/contracts';

/** Awaits a rejection and checks it is the typed AppHostError expected (and its details.reason, when given). */
export async function expectAppError(work: Promise<unknown>, code: ErrorCode, reason?: string): Promise<AppHostError> {
  let caught: unknown;
  try {
    await work;
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AppHostError);
  const error = caught as AppHostError;
  expect({ code: error.code, reason: reason === undefined ? undefined : error.details?.reason }).toEqual({ code, reason });
  return error;
}
