import { AppHostError, GovernedReasons, type Principal, type ViewRevocationReason } from '@apphost/contracts';
import type { ViewCollaborators } from './view-collaborators';
import type { ViewRecord } from './view-records';

/**
 * What can revoke a live View, checked lazily whenever it is touched (get, renew): the lease ran out, the opener's
 * principal was revoked, the toolset was revoked or rebound (a new binding generation or revision), or the
 * generation it is bound to is gone. The first that holds is the reason; null while the View is live.
 * `opener` is the caller when it is the View's opener (its principal is the one to check), else null.
 */
export async function revocationOf(
  record: ViewRecord,
  opener: Pick<Principal, 'tenant' | 'subject'> | null,
  peers: ViewCollaborators,
  now: number,
): Promise<ViewRevocationReason | null> {
  if (record.mode !== 'live' || record.state !== 'ACTIVE' || !record.generation) return null;
  if (record.expiresAt !== null && Date.parse(record.expiresAt) <= now) return 'LEASE_EXPIRED';
  if (opener && (await peers.principalRevoked(opener))) return 'PRINCIPAL_REVOKED';
  const status = record.widget.toolsetId ? await peers.toolset(record.widget.toolsetId) : null;
  if (!status || status.state !== 'PROFILE_BOUND') return 'TOOLSET_REVOKED';
  if (status.bindingGeneration !== record.bindingGeneration || status.bindingRevision !== record.bindingRevision) return 'TOOLSET_REBOUND';
  if (!(await peers.generationAlive(record.generation))) return 'GENERATION_GONE';
  return null;
}

/** Why an ended View ended (a CLOSED one was torn down). */
export function revocationReasonOf(record: ViewRecord): ViewRevocationReason {
  if (record.state === 'CLOSED') return 'TORN_DOWN';
  const reason = record.reason;
  return reason !== null && reason !== 'LEGACY_WIDGET' && reason !== 'SEALED_RESULT_MISSING' && reason !== 'SEALED_RESULT_CORRUPT'
    ? (reason as ViewRevocationReason)
    : 'TORN_DOWN';
}

/** What every operation on an ended View answers: FAILED_PRECONDITION `VIEW_REVOKED`, `details.revocation` says why. */
export function revokedError(reason: ViewRevocationReason): AppHostError {
  return new AppHostError('FAILED_PRECONDITION', `the view is no longer live (${reason})`, {
    details: GovernedReasons.details('VIEW_REVOKED', { revocation: reason }),
  });
}
