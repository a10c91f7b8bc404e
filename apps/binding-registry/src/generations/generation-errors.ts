import { AppHostError, RegistryReasons, CONNECTION_GENERATION_GONE } from '@apphost/contracts';

/**
 * The one error every holder of a generation sees once its owner no longer holds it. No silent migration. With a
 * retry hint it is transient (the owner died: the next acquire claims a new generation), so retryable.
 */
export function generationGone(generationId: string, why: string, retryAfterMs?: number, options: { inFlight?: boolean } = {}): AppHostError {
  const transient = retryAfterMs !== undefined;
  return new AppHostError('FAILED_PRECONDITION', `connection generation ${generationId} is gone (${why})`, {
    retryable: transient,
    details: RegistryReasons.details(CONNECTION_GENERATION_GONE, {
      generationId,
      why,
      ...(transient ? { retryAfterMs } : {}),
      // The operation had been handed to the connection when it died: it may have reached the server.
      ...(options.inFlight ? { inFlight: true } : {}),
    }),
  });
}
