import type { Database } from '@apphost/persistence';
import type { BindingState, HostProfile, ProviderReadiness, ToolsetSpec } from '@apphost/contracts';
import type { PutOutcome } from './profiles.repository';

export interface ToolsetRow {
  toolsetId: string;
  /** As stored (immutable); its `profileId` is the first generation's. */
  spec: ToolsetSpec;
  /** The profile of the current binding generation: the spec's, or the one a rebind moved it to. */
  profileId: string | null;
  currentGeneration: number;
}

export interface BindingRow {
  toolsetId: string;
  generation: number;
  state: BindingState;
  readiness: ProviderReadiness[];
  bindingRevision: string | null;
  /** The profile this generation binds under (null: model-only by construction). */
  profileId: string | null;
  constructions: number;
  /** Construction leases taken: more than one means a constructor died (or overran its lease) and was replaced. */
  constructionAttempts: number;
  closes: number;
}

const bindingOf = (r: Record<string, unknown>): BindingRow => ({
  toolsetId: r['toolset_id'] as string,
  generation: Number(r['generation']),
  state: r['state'] as BindingState,
  readiness: r['readiness'] as ProviderReadiness[],
  bindingRevision: (r['binding_revision'] as string | null) ?? null,
  profileId: (r['profile_id'] as string | null) ?? null,
  constructions: Number(r['constructions']),
  constructionAttempts: Number(r['construction_attempts']),
  closes: Number(r['closes']),
});

/** The current binding generation as a read answers it: its state, not its construction bookkeeping. */
export type CurrentBinding = Pick<BindingRow, 'generation' | 'state' | 'bindingRevision'>;

/** The `b.` columns of a toolset row joined with its current binding; undefined when the join found no binding. */
const currentBindingOf = (r: Record<string, unknown>): CurrentBinding | undefined =>
  r['generation'] === null || r['generation'] === undefined
    ? undefined
    : { generation: Number(r['generation']), state: r['state'] as BindingState, bindingRevision: (r['binding_revision'] as string | null) ?? null };

/**
 * Toolsets and their binding generations. Every transition is one guarded statement (compare-and-set on the
 * state), so the latch holds across replicas: at most one construction per binding generation (the
 * UNMATERIALIZED → MATERIALIZING winner, holding a construction lease) and exactly one close (the REVOKING → CLOSED
 * winner). An expired construction lease is taken over by the next attempt; only the current lease's token finishes.
 */
export class ToolsetsRepository {
  constructor(private readonly db: Database) {}

  async put(toolsetId: string, spec: ToolsetSpec, digest: string): Promise<PutOutcome> {
    // The insert that did nothing commits nothing: the read-back runs outside the transaction.
    const created = await this.db.transaction(async (tx) => {
      const inserted = await tx.query(
        `INSERT INTO toolsets (toolset_id, spec, digest, profile_id) VALUES ($1, $2, $3, $4) ON CONFLICT (toolset_id) DO NOTHING`,
        [toolsetId, spec, digest, spec.profileId],
      );
      if (inserted.rowCount !== 1) return false;
      await tx.query(`INSERT INTO bindings (toolset_id, generation, state, profile_id) VALUES ($1, 1, 'UNMATERIALIZED', $2)`, [toolsetId, spec.profileId]);
      return true;
    });
    if (created) return { kind: 'created' };
    const existing = await this.db.query<{ digest: string }>(`SELECT digest FROM toolsets WHERE toolset_id = $1`, [toolsetId]);
    return existing.rows[0]?.digest === digest ? { kind: 'same' } : { kind: 'conflict' };
  }

  async get(toolsetId: string): Promise<ToolsetRow | undefined> {
    const { rows } = await this.db.query(`SELECT toolset_id, spec, profile_id, current_generation FROM toolsets WHERE toolset_id = $1`, [toolsetId]);
    const r = rows[0];
    return r ? { toolsetId: r.toolset_id, spec: r.spec, profileId: r.profile_id, currentGeneration: Number(r.current_generation) } : undefined;
  }

  /**
   * The toolset, its current binding generation's row and its current profile's body, in one statement: the read an
   * acquire or a discovery starts with (three reads before). The profile is immutable, so reading it with the row
   * changes nothing about what is seen.
   */
  async current(toolsetId: string): Promise<{ toolset: ToolsetRow; binding: BindingRow | undefined; profile: HostProfile | undefined } | undefined> {
    const { rows } = await this.db.query(
      `SELECT t.toolset_id AS t_toolset_id, t.spec AS t_spec, t.profile_id AS t_profile_id, t.current_generation AS t_current_generation,
              p.body AS p_body, b.*
         FROM toolsets t
         LEFT JOIN bindings b ON b.toolset_id = t.toolset_id AND b.generation = t.current_generation
         LEFT JOIN profiles p ON p.profile_id = t.profile_id
        WHERE t.toolset_id = $1`,
      [toolsetId],
    );
    const r = rows[0];
    if (!r) return undefined;
    return {
      toolset: { toolsetId: r.t_toolset_id, spec: r.t_spec, profileId: r.t_profile_id, currentGeneration: Number(r.t_current_generation) },
      binding: r.generation === null || r.generation === undefined ? undefined : bindingOf(r),
      profile: (r.p_body as HostProfile | null) ?? undefined,
    };
  }

  /**
   * What `get-toolset` answers, in one statement (three before): the toolset, its current binding generation's state
   * and the toolset's live connection count, all as of the same snapshot. Undefined when the toolset does not exist;
   * `binding` undefined when its current generation has no row.
   */
  async status(
    toolsetId: string,
  ): Promise<{ toolset: ToolsetRow; binding: (CurrentBinding & Pick<BindingRow, 'readiness'>) | undefined; liveConnections: number } | undefined> {
    const { rows } = await this.db.query(
      `SELECT t.spec, t.profile_id, t.current_generation, b.generation, b.state, b.binding_revision, b.readiness,
              (SELECT count(*) FROM connection_generations g WHERE g.toolset_id = t.toolset_id AND g.state = 'LIVE') AS live_connections
         FROM toolsets t
         LEFT JOIN bindings b ON b.toolset_id = t.toolset_id AND b.generation = t.current_generation
        WHERE t.toolset_id = $1`,
      [toolsetId],
    );
    const r = rows[0];
    if (!r) return undefined;
    const binding = currentBindingOf(r);
    return {
      toolset: { toolsetId, spec: r.spec, profileId: r.profile_id, currentGeneration: Number(r.current_generation) },
      binding: binding && { ...binding, readiness: r.readiness as ProviderReadiness[] },
      liveConnections: Number(r.live_connections),
    };
  }

  /**
   * What `verify-binding-revision` judges, in one statement (three before): the toolset's current profile id and body
   * and its current binding generation's state. The profile is immutable, so reading it with the rows changes nothing
   * about what is seen. Undefined when the toolset does not exist.
   */
  async verifiable(
    toolsetId: string,
  ): Promise<{ profileId: string | null; currentGeneration: number; profile: HostProfile | undefined; binding: CurrentBinding | undefined } | undefined> {
    const { rows } = await this.db.query(
      `SELECT t.profile_id, t.current_generation, p.body AS profile, b.generation, b.state, b.binding_revision
         FROM toolsets t
         LEFT JOIN profiles p ON p.profile_id = t.profile_id
         LEFT JOIN bindings b ON b.toolset_id = t.toolset_id AND b.generation = t.current_generation
        WHERE t.toolset_id = $1`,
      [toolsetId],
    );
    const r = rows[0];
    if (!r) return undefined;
    return {
      profileId: r.profile_id,
      currentGeneration: Number(r.current_generation),
      profile: (r.profile as HostProfile | null) ?? undefined,
      binding: currentBindingOf(r),
    };
  }

  async binding(toolsetId: string, generation: number): Promise<BindingRow | undefined> {
    const { rows } = await this.db.query(`SELECT * FROM bindings WHERE toolset_id = $1 AND generation = $2`, [toolsetId, generation]);
    return rows[0] ? bindingOf(rows[0]) : undefined;
  }

  /**
   * Takes the construction lease: true for exactly one caller at a time per binding generation. The first attempt
   * moves UNMATERIALIZED → MATERIALIZING; a later one takes over a MATERIALIZING binding only once its lease expired
   * (its constructor died; a row from before construction leases has none), under a new token, so the dead
   * constructor's late finish cannot land.
   */
  async beginMaterialize(toolsetId: string, generation: number, token: string, leaseMs: number): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE bindings SET state = 'MATERIALIZING', constructions = 1, construction_attempts = construction_attempts + 1, construction_token = $3,
              construction_lease_expires_at = now() + make_interval(secs => $4::double precision / 1000), updated_at = now()
        WHERE toolset_id = $1 AND generation = $2
          AND (state = 'UNMATERIALIZED' OR (state = 'MATERIALIZING' AND (construction_lease_expires_at IS NULL OR construction_lease_expires_at <= now())))`,
      [toolsetId, generation, token, leaseMs],
    );
    return r.rowCount === 1;
  }

  /** MATERIALIZING → PROFILE_BOUND | MODEL_ONLY by the lease holder; false when a revocation or a takeover got there first. */
  async finishMaterialize(
    toolsetId: string,
    generation: number,
    token: string,
    state: 'PROFILE_BOUND' | 'MODEL_ONLY',
    readiness: ProviderReadiness[],
    bindingRevision: string | null,
  ): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE bindings SET state = $4, readiness = $5, binding_revision = $6, construction_lease_expires_at = NULL, updated_at = now()
        WHERE toolset_id = $1 AND generation = $2 AND state = 'MATERIALIZING' AND construction_token = $3`,
      [toolsetId, generation, token, state, JSON.stringify(readiness), bindingRevision],
    );
    return r.rowCount === 1;
  }

  /** A construction that failed gives its lease back at once: the next attempt need not wait for it to expire. */
  async abandonMaterialize(toolsetId: string, generation: number, token: string): Promise<void> {
    await this.db.query(
      `UPDATE bindings SET construction_lease_expires_at = now(), updated_at = now()
        WHERE toolset_id = $1 AND generation = $2 AND state = 'MATERIALIZING' AND construction_token = $3`,
      [toolsetId, generation, token],
    );
  }

  /**
   * Starts closing a binding generation: UNMATERIALIZED goes straight to CLOSED (zero constructions, nothing to
   * close); MATERIALIZING / PROFILE_BOUND / MODEL_ONLY go to REVOKING. Returns the state after the statement.
   */
  async beginRevoke(toolsetId: string, generation: number): Promise<BindingState | undefined> {
    const { rows } = await this.db.query(
      `UPDATE bindings SET state = CASE WHEN state = 'UNMATERIALIZED' THEN 'CLOSED' ELSE 'REVOKING' END, updated_at = now()
        WHERE toolset_id = $1 AND generation = $2 AND state IN ('UNMATERIALIZED', 'MATERIALIZING', 'PROFILE_BOUND', 'MODEL_ONLY')
        RETURNING state`,
      [toolsetId, generation],
    );
    if (rows[0]) return rows[0].state as BindingState;
    return (await this.binding(toolsetId, generation))?.state;
  }

  /** REVOKING → CLOSED: exactly one caller wins (closes ≤ 1 is also a table constraint). */
  async finishRevoke(toolsetId: string, generation: number): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE bindings SET state = 'CLOSED', closes = closes + 1, updated_at = now() WHERE toolset_id = $1 AND generation = $2 AND state = 'REVOKING'`,
      [toolsetId, generation],
    );
    return r.rowCount === 1;
  }

  /**
   * Installs binding generation `from + 1` under `profileId` iff `from` is still current: a rebind never
   * resurrects an old generation. The toolset's current profile moves with it, in the same transaction.
   */
  async installNextGeneration(toolsetId: string, from: number, profileId: string | null): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const bumped = await tx.query(
        `UPDATE toolsets SET current_generation = current_generation + 1, profile_id = $3 WHERE toolset_id = $1 AND current_generation = $2`,
        [toolsetId, from, profileId],
      );
      if (bumped.rowCount !== 1) return false; // nothing written, nothing to commit
      await tx.query(`INSERT INTO bindings (toolset_id, generation, state, profile_id) VALUES ($1, $2, 'UNMATERIALIZED', $3)`, [
        toolsetId,
        from + 1,
        profileId,
      ]);
      return true;
    });
  }
}
