import type { Database } from '@apphost/persistence';
import type { HostProfile } from '@apphost/contracts';

export type PutOutcome = { kind: 'created' } | { kind: 'same' } | { kind: 'conflict' };

/** Immutable profiles: insert once; the same id with another digest is a conflict, never an update. */
export class ProfilesRepository {
  constructor(private readonly db: Database) {}

  async put(profileId: string, body: HostProfile, digest: string): Promise<PutOutcome> {
    const inserted = await this.db.query(`INSERT INTO profiles (profile_id, body, digest) VALUES ($1, $2, $3) ON CONFLICT (profile_id) DO NOTHING`, [
      profileId,
      body,
      digest,
    ]);
    if (inserted.rowCount === 1) return { kind: 'created' };
    const existing = await this.db.query<{ digest: string }>(`SELECT digest FROM profiles WHERE profile_id = $1`, [profileId]);
    return existing.rows[0]?.digest === digest ? { kind: 'same' } : { kind: 'conflict' };
  }

  async get(profileId: string): Promise<HostProfile | undefined> {
    const { rows } = await this.db.query<{ body: HostProfile }>(`SELECT body FROM profiles WHERE profile_id = $1`, [profileId]);
    return rows[0]?.body;
  }
}
