import type { Database } from '@apphost/persistence';

export interface GenerationRow {
  generationId: string;
  generationKey: string;
  toolsetId: string;
  bindingGeneration: number;
  connectionClass: 'app-safe' | 'full';
  advertisesUi: boolean;
  ownerInstance: string;
  ownerIncarnation: string;
  fence: number;
  state: 'LIVE' | 'CLOSED' | 'GONE';
}

const rowOf = (r: Record<string, unknown>): GenerationRow => ({
  generationId: r['generation_id'] as string,
  generationKey: r['generation_key'] as string,
  toolsetId: r['toolset_id'] as string,
  bindingGeneration: Number(r['binding_generation']),
  connectionClass: r['connection_class'] as 'app-safe' | 'full',
  advertisesUi: r['advertises_ui'] as boolean,
  ownerInstance: r['owner_instance'] as string,
  ownerIncarnation: r['owner_incarnation'] as string,
  fence: Number(r['fence']),
  state: r['state'] as GenerationRow['state'],
});

/** A live owner: its instance row is LIVE, of the same incarnation, and its lease has not lapsed. */
const OWNER_ALIVE = `EXISTS (SELECT 1 FROM registry_instances i
  WHERE i.instance_id = g.owner_instance AND i.incarnation = g.owner_incarnation AND i.state = 'LIVE' AND i.lease_expires_at > now())`;

export type NewGeneration = Omit<GenerationRow, 'fence' | 'state'>;

/**
 * The directory of connection generations and registry instances. Ownership is a row: one LIVE row per key
 * (a partial unique index), claimed with a fencing value from a sequence, owned by an instance incarnation
 * whose lease must stay fresh. Every owner-side transition names the generation *and* its fence.
 */
export class GenerationsRepository {
  constructor(private readonly db: Database) {}

  // ---- instances -------------------------------------------------------------------------------------------

  /**
   * Registers a new incarnation of this instance and declares whatever an earlier incarnation owned GONE, in one
   * transaction. At startup (`replacing` unset) it takes the row over unconditionally: the process that held it is
   * this instance's previous run. After a lapse (`replacing` = the lapsed incarnation) it takes the row only if it is
   * still that incarnation's or nobody holds it live, never from another process running under the same id.
   */
  async registerInstance(instanceId: string, incarnation: string, leaseMs: number, replacing?: string): Promise<{ registered: boolean; gone: number }> {
    return this.db.transaction(async (tx) => {
      const registered = await tx.query(
        `INSERT INTO registry_instances (instance_id, incarnation, state, lease_expires_at) VALUES ($1, $2, 'LIVE', now() + make_interval(secs => $3::double precision / 1000))
         ON CONFLICT (instance_id) DO UPDATE SET incarnation = EXCLUDED.incarnation, state = 'LIVE', lease_expires_at = EXCLUDED.lease_expires_at, started_at = now()
          WHERE $4::uuid IS NULL OR registry_instances.incarnation = $4::uuid OR registry_instances.state <> 'LIVE' OR registry_instances.lease_expires_at <= now()`,
        [instanceId, incarnation, leaseMs, replacing ?? null],
      );
      if (registered.rowCount !== 1) return { registered: false, gone: 0 };
      const gone = await tx.query(
        `UPDATE connection_generations SET state = 'GONE', close_reason = 'OWNER_RESTARTED', closed_at = now()
          WHERE owner_instance = $1 AND owner_incarnation <> $2 AND state = 'LIVE'`,
        [instanceId, incarnation],
      );
      return { registered: true, gone: gone.rowCount };
    });
  }

  /**
   * Renews the lease while it is still running; false means this incarnation's lease is over (it lapsed, another
   * replica found the owner unreachable, or another incarnation took the row): it must fence itself and never
   * renew it again.
   */
  async renewLease(instanceId: string, incarnation: string, leaseMs: number): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE registry_instances SET lease_expires_at = now() + make_interval(secs => $3::double precision / 1000)
        WHERE instance_id = $1 AND incarnation = $2 AND state = 'LIVE' AND lease_expires_at > now()`,
      [instanceId, incarnation, leaseMs],
    );
    return r.rowCount === 1;
  }

  /**
   * Ends the lease of an owner whose per-instance subject has no responders (it crashed or left the bus): its
   * generations count as dead from now on, and the owner itself, should it come back, finds its lease over.
   */
  async endUnreachableOwner(instanceId: string, incarnation: string): Promise<void> {
    await this.db.query(
      `UPDATE registry_instances SET lease_expires_at = now() WHERE instance_id = $1 AND incarnation = $2 AND state = 'LIVE' AND lease_expires_at > now()`,
      [instanceId, incarnation],
    );
  }

  /** Graceful stop: the lease ends now and every generation it owned is CLOSED, so takeover is immediate. */
  async stopInstance(instanceId: string, incarnation: string): Promise<void> {
    await this.db.query(
      `UPDATE connection_generations SET state = 'CLOSED', close_reason = 'OWNER_STOPPED', closed_at = now()
        WHERE owner_instance = $1 AND owner_incarnation = $2 AND state = 'LIVE'`,
      [instanceId, incarnation],
    );
    await this.db.query(`UPDATE registry_instances SET state = 'STOPPED', lease_expires_at = now() WHERE instance_id = $1 AND incarnation = $2`, [
      instanceId,
      incarnation,
    ]);
  }

  // ---- generations -----------------------------------------------------------------------------------------

  /** The LIVE generation of `key` whose owner is alive, if any. */
  async findLive(key: string): Promise<GenerationRow | undefined> {
    const { rows } = await this.db.query(`SELECT * FROM connection_generations g WHERE g.generation_key = $1 AND g.state = 'LIVE' AND ${OWNER_ALIVE}`, [key]);
    return rows[0] ? rowOf(rows[0]) : undefined;
  }

  /** A LIVE row of `key` whose owner is dead becomes GONE (never handed to another owner). */
  async expireDeadOwner(key: string): Promise<number> {
    const r = await this.db.query(
      `UPDATE connection_generations g SET state = 'GONE', close_reason = 'OWNER_GONE', closed_at = now()
        WHERE g.generation_key = $1 AND g.state = 'LIVE' AND NOT ${OWNER_ALIVE}`,
      [key],
    );
    return r.rowCount;
  }

  /** Claims `key` for this instance with a fresh fence; undefined when another claim won the race. */
  async claim(g: NewGeneration): Promise<GenerationRow | undefined> {
    const { rows } = await this.db.query(
      `INSERT INTO connection_generations (generation_id, generation_key, toolset_id, binding_generation, connection_class, advertises_ui, owner_instance, owner_incarnation, fence, state)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, nextval('generation_fence'), 'LIVE'
        WHERE EXISTS (SELECT 1 FROM registry_instances WHERE instance_id = $7 AND incarnation = $8 AND state = 'LIVE' AND lease_expires_at > now())
       ON CONFLICT (generation_key) WHERE state = 'LIVE' DO NOTHING
       RETURNING *`,
      [g.generationId, g.generationKey, g.toolsetId, g.bindingGeneration, g.connectionClass, g.advertisesUi, g.ownerInstance, g.ownerIncarnation],
    );
    return rows[0] ? rowOf(rows[0]) : undefined;
  }

  /** Owner-side end of a generation, guarded by id and fence: a stale owner cannot close a newer claim. */
  async end(generationId: string, fence: number, state: 'CLOSED' | 'GONE', reason: string): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE connection_generations SET state = $3, close_reason = $4, closed_at = now() WHERE generation_id = $1 AND fence = $2 AND state = 'LIVE'`,
      [generationId, fence, state, reason],
    );
    return r.rowCount === 1;
  }

  async get(generationId: string): Promise<GenerationRow | undefined> {
    const { rows } = await this.db.query(`SELECT * FROM connection_generations WHERE generation_id = $1`, [generationId]);
    return rows[0] ? rowOf(rows[0]) : undefined;
  }

  /** Owners holding LIVE generations of a binding generation (for the revocation fan-out). */
  async ownersOf(toolsetId: string, bindingGeneration: number): Promise<string[]> {
    const { rows } = await this.db.query<{ owner_instance: string }>(
      `SELECT DISTINCT owner_instance FROM connection_generations WHERE toolset_id = $1 AND binding_generation = $2 AND state = 'LIVE'`,
      [toolsetId, bindingGeneration],
    );
    return rows.map((r) => r.owner_instance);
  }

  /** Every instance holding any LIVE generation (for the session-deletion fan-out: the directory does not know sessions). */
  async liveOwners(): Promise<string[]> {
    const { rows } = await this.db.query<{ owner_instance: string }>(`SELECT DISTINCT owner_instance FROM connection_generations WHERE state = 'LIVE'`);
    return rows.map((r) => r.owner_instance);
  }
}
