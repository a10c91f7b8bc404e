import { AppHostError } from '@apphost/contracts';

/** Awaits a rejection and returns it as the typed error it must be. */
export async function expectTyped(promise: Promise<unknown>): Promise<AppHostError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof AppHostError)) throw new Error(`expected an AppHostError, got ${error === undefined ? 'success' : String(error)}`);
  return error;
}
