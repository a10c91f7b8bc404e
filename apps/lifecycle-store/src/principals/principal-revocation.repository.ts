import { canonicalDigest } from '@apphost/canonical-json';
import type { Database } from '@apphost/persistence';

export interface PrincipalIdentity {
  tenant: string;
  subject: string;
}

export interface RevocationState {
  revoked: boolean;
  since: string | null;
}

/**
 * The stored form of a subject: a purpose-tagged digest, not a keyed one, on purpose — rotating or losing a key
 * would silently restore every revoked principal, and revocation must fail closed.
 */
export function subjectDigest(principal: PrincipalIdentity): string {
  return canonicalDigest('replay-identity', { kind: 'apphost.lifecycle-store.principal-revocation.v1', tenant: principal.tenant, subject: principal.subject });
}

const NOT_REVOKED: RevocationState = { revoked: false, since: null };
const revokedSince = (at: Date): RevocationState => ({ revoked: true, since: new Date(at).toISOString() });

/** Revoked principals (table `principal_revocations`, migration 1770000000000): a row present means revoked. */
export class PrincipalRevocationRepository {
  constructor(private readonly db: Database) {}

  async state(principal: PrincipalIdentity): Promise<RevocationState> {
    const { rows } = await this.db.query<{ revoked_at: Date }>(`SELECT revoked_at FROM principal_revocations WHERE tenant = $1 AND subject_digest = $2`, [
      principal.tenant,
      subjectDigest(principal),
    ]);
    return rows[0] ? revokedSince(rows[0].revoked_at) : NOT_REVOKED;
  }

  /** Revokes; `changed` is false when it already was (and `since` stays the first revocation's time). */
  async revoke(principal: PrincipalIdentity): Promise<RevocationState & { changed: boolean }> {
    const { rows } = await this.db.query<{ revoked_at: Date }>(
      `INSERT INTO principal_revocations (tenant, subject_digest) VALUES ($1, $2) ON CONFLICT (tenant, subject_digest) DO NOTHING RETURNING revoked_at`,
      [principal.tenant, subjectDigest(principal)],
    );
    if (rows[0]) return { ...revokedSince(rows[0].revoked_at), changed: true };
    // Already revoked (the conflicting row is committed by now; a fresh statement sees it). A restore racing in
    // between leaves it restored, and this call reports what it found.
    return { ...(await this.state(principal)), changed: false };
  }

  /** Restores; `changed` is false when it was not revoked. */
  async restore(principal: PrincipalIdentity): Promise<RevocationState & { changed: boolean }> {
    const { rowCount } = await this.db.query(`DELETE FROM principal_revocations WHERE tenant = $1 AND subject_digest = $2`, [
      principal.tenant,
      subjectDigest(principal),
    ]);
    return { ...NOT_REVOKED, changed: rowCount > 0 };
  }
}
