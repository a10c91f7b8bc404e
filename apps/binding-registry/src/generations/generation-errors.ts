import { AppHostError, RegistryReasons, CONNECTION_GENERATION_GONE } from '@apphost/contracts';

/** The one error every holder of a generation sees once its owner no longer holds it. No silent migration. */
export function generationGone(generationId: string, why: string): AppHostError {
  return new AppHostError('FAILED_PRECONDITION', `connection generation ${generationId} is gone (${why})`, {
    details: RegistryReasons.details(CONNECTION_GENERATION_GONE, { generationId, why }),
  });
}

/** The bus's "no responders" answer on an owner's per-instance subject: that owner is gone (its processes with it). */
export function ownerUnreachable(error: unknown): boolean {
  return error instanceof AppHostError && error.code === 'UNAVAILABLE' && /^no service is serving/.test(error.message);
}
