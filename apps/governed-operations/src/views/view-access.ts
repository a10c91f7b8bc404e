import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { canonicalize } from '@apphost/canonical-json';
import { AppHostError, GovernedReasons, type Principal, type SessionKey, type ViewCaller } from '@apphost/contracts';
import type { StoredView, ViewRecord, ViewRecords } from './view-records';

/** A View operation on a View (or widget) the caller may not see: indistinguishable from one that does not exist. */
export function viewNotFound(): AppHostError {
  return new AppHostError('NOT_FOUND', 'view not found');
}

/**
 * Whether the caller may act on the session: its tenant and user, the `view` scope, and for a view token
 * (`principal.restrictedTo`) exactly this session. Anything else reads as NOT_FOUND. A view token also names the
 * incarnation it was minted for: `incarnationAdmits` checks it once the incarnation in question is known.
 */
export function callerMaySee(caller: ViewCaller, session: SessionKey): boolean {
  const { principal } = caller;
  if (principal.tenant !== session.tenant || caller.userId !== session.userId) return false;
  if (!principal.scopes.includes('view')) return false;
  const only = principal.restrictedTo;
  return !only || (only.appName === session.appName && only.sessionId === session.sessionId);
}

/**
 * Whether a view token reaches `incarnation` of its session: only the one it was minted for, so a token handed out
 * before the session was deleted and created again opens nothing in the new one. Other principals: always.
 */
export function incarnationAdmits(caller: ViewCaller, incarnation: number): boolean {
  const only = caller.principal.restrictedTo;
  return !only || only.incarnation === incarnation;
}

/** The View if the caller may see it; NOT_FOUND otherwise (and for a bootstrap still in progress). */
export async function findVisible(records: ViewRecords, caller: ViewCaller, viewId: string): Promise<StoredView> {
  const stored = await records.find(viewId);
  if (!stored || stored.record.state === 'OPENING') throw viewNotFound();
  const { session, incarnation } = stored.record;
  if (!callerMaySee(caller, session) || !incarnationAdmits(caller, incarnation)) throw viewNotFound();
  return stored;
}

/** A fresh View grant: 32 random bytes, base64url (43 characters). */
export function mintGrant(): string {
  return randomBytes(32).toString('base64url');
}

// Purpose-tagged so a grant digest can never be confused with any other digest of the same bytes.
export function grantDigestOf(grant: string): string {
  return createHash('sha256').update('apphost.view-grant.v1\n', 'utf8').update(grant, 'utf8').digest('hex');
}

/** Timing-safe: the comparison does not reveal how much of a guessed grant was right. */
export function grantMatches(grant: string, digest: string | null): boolean {
  if (digest === null) return false;
  return timingSafeEqual(Buffer.from(grantDigestOf(grant), 'hex'), Buffer.from(digest, 'hex'));
}

/**
 * The grant authenticates the View's opener only: a wrong grant, a grantless View (a placeholder), or another
 * principal holding the right grant are all PERMISSION_DENIED `VIEW_GRANT_INVALID`.
 */
export function assertOpenersGrant(record: Pick<ViewRecord, 'grantDigest' | 'principalDigest'>, caller: ViewCaller, grant: string): void {
  if (!grantMatches(grant, record.grantDigest) || principalDigestOf(caller.principal) !== record.principalDigest)
    throw new AppHostError('PERMISSION_DENIED', 'the view grant is not valid for this view', { details: GovernedReasons.details('VIEW_GRANT_INVALID') });
}

export function principalDigestOf(principal: Pick<Principal, 'tenant' | 'subject'>): string {
  return createHash('sha256')
    .update('apphost.view-principal.v1\n', 'utf8')
    .update(canonicalize({ tenant: principal.tenant, subject: principal.subject }), 'utf8')
    .digest('hex');
}

/** `vw-` and 32 hex digits. */
export function newViewId(): string {
  return `vw-${randomBytes(16).toString('hex')}`;
}
