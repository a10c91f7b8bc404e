import { AppHostError, RegistryReasons, CONNECTION_GENERATION_GONE } from '@apphost/contracts';

/** The one error every holder of a generation sees once its owner no longer holds it. No silent migration. */
export function generationGone(generationId: string, why: string): AppHostError {
  return new AppHostError('FAILED_PRECONDITION', `connection generation ${generationId} is gone (${why})`, {
    details: RegistryReasons.details(CONNECTION_GENERATION_GONE, { generationId, why }),
  });
}
