import type { Database } from '@apphost/persistence';

export type ConnectionClass = 'app-safe' | 'full';

export interface PinRow {
  toolsetId: string;
  connectionClass: ConnectionClass;
  name: string;
  state: 'APPROVED' | 'QUARANTINED';
  approvedFingerprint: string;
  candidateFingerprint: string | null;
  updatedAt: string;
}

export interface Sighting {
  connectionClass: ConnectionClass;
  name: string;
  fingerprint: string;
  declaration: Record<string, unknown>;
}

interface DbRow {
  toolset_id: string;
  connection_class: ConnectionClass;
  tool_name: string;
  state: 'APPROVED' | 'QUARANTINED';
  approved_fingerprint: string;
  candidate_fingerprint: string | null;
  updated_at: Date;
}

const COLUMNS = 'toolset_id, connection_class, tool_name, state, approved_fingerprint, candidate_fingerprint, updated_at';
const toPin = (r: DbRow): PinRow => ({
  toolsetId: r.toolset_id,
  connectionClass: r.connection_class,
  name: r.tool_name,
  state: r.state,
  approvedFingerprint: r.approved_fingerprint,
  candidateFingerprint: r.candidate_fingerprint,
  updatedAt: r.updated_at.toISOString(),
});

/** All SQL of tool-definition pinning. First sight wins across replicas (insert-or-nothing, then read back). */
export class PinsRepository {
  constructor(private readonly db: Database) {}

  /**
   * Records first sightings (one statement) and returns every pin of these tools as stored. Pins are never deleted,
   * so when every sighted tool is pinned already (every listing after the first) the insert-or-nothing would write
   * nothing: the pins are read first (or `read`, the toolset's pins read while it was being listed), and only a
   * listing with a tool never seen before records it and reads again.
   */
  async recordAndLoad(toolsetId: string, sightings: readonly Sighting[], read?: Promise<PinRow[]>): Promise<PinRow[]> {
    if (sightings.length === 0) return [];
    const classes = sightings.map((s) => s.connectionClass);
    const names = sightings.map((s) => s.name);
    const fps = sightings.map((s) => s.fingerprint);
    const known = await (read ?? this.load(toolsetId, classes, names));
    const pinned = new Set(known.map((p) => `${p.connectionClass}\u0000${p.name}`));
    if (sightings.every((s) => pinned.has(`${s.connectionClass}\u0000${s.name}`))) return known;
    await this.db.query(
      `WITH inserted AS (
         INSERT INTO tool_pins (toolset_id, connection_class, tool_name, state, approved_fingerprint)
         SELECT $1, c, n, 'APPROVED', f FROM unnest($2::text[], $3::text[], $4::text[]) AS s(c, n, f)
         ON CONFLICT DO NOTHING
         RETURNING connection_class, tool_name, approved_fingerprint)
       INSERT INTO tool_pin_events (toolset_id, connection_class, tool_name, kind, fingerprint)
       SELECT $1, connection_class, tool_name, 'FIRST_SIGHT', approved_fingerprint FROM inserted`,
      [toolsetId, classes, names, fps],
    );
    return this.load(toolsetId, classes, names);
  }

  /** Every stored pin of the toolset on these connection classes (one range of the primary key). */
  async loadClasses(toolsetId: string, classes: readonly ConnectionClass[]): Promise<PinRow[]> {
    const { rows } = await this.db.query<DbRow>(`SELECT ${COLUMNS} FROM tool_pins WHERE toolset_id = $1 AND connection_class = ANY($2::text[])`, [
      toolsetId,
      classes,
    ]);
    return rows.map(toPin);
  }

  /** The stored pins of these (class, name) pairs of the toolset. */
  private async load(toolsetId: string, classes: readonly string[], names: readonly string[]): Promise<PinRow[]> {
    const { rows } = await this.db.query<DbRow>(
      `SELECT ${COLUMNS} FROM tool_pins p JOIN unnest($2::text[], $3::text[]) AS s(c, n) ON p.connection_class = s.c AND p.tool_name = s.n WHERE p.toolset_id = $1`,
      [toolsetId, classes, names],
    );
    return rows.map(toPin);
  }

  /**
   * Quarantines a drifted definition; logs the drift with both fingerprints once per new candidate. Returns the
   * approved fingerprint when this call changed the candidate (a new drift), else null.
   */
  async quarantine(toolsetId: string, s: Sighting): Promise<string | null> {
    const { rows } = await this.db.query<{ approved_fingerprint: string }>(
      `WITH changed AS (
         UPDATE tool_pins SET state = 'QUARANTINED', candidate_fingerprint = $4, candidate_declaration = $5, updated_at = now()
         WHERE toolset_id = $1 AND connection_class = $2 AND tool_name = $3 AND approved_fingerprint <> $4 AND candidate_fingerprint IS DISTINCT FROM $4
         RETURNING approved_fingerprint)
       INSERT INTO tool_pin_events (toolset_id, connection_class, tool_name, kind, previous_fingerprint, fingerprint)
       SELECT $1, $2, $3, 'DRIFT', approved_fingerprint, $4 FROM changed
       RETURNING previous_fingerprint AS approved_fingerprint`,
      [toolsetId, s.connectionClass, s.name, s.fingerprint, s.declaration],
    );
    return rows[0]?.approved_fingerprint ?? null;
  }

  async list(toolsetId: string, name?: string): Promise<PinRow[]> {
    const { rows } = await this.db.query<DbRow>(
      `SELECT ${COLUMNS} FROM tool_pins WHERE toolset_id = $1 AND ($2::text IS NULL OR tool_name = $2) ORDER BY tool_name, connection_class`,
      [toolsetId, name ?? null],
    );
    return rows.map(toPin);
  }

  /**
   * Approves the quarantined candidate(s) of a tool, on every class where it is quarantined (optionally only the
   * candidate with `fingerprint`), logging both fingerprints. Returns the pins before and after.
   */
  async approve(toolsetId: string, name: string, fingerprint: string | null, actor: string): Promise<{ before: PinRow[]; after: PinRow[] }> {
    return this.db.transaction(async (tx) => {
      const before = (
        await tx.query<DbRow>(`SELECT ${COLUMNS} FROM tool_pins WHERE toolset_id = $1 AND tool_name = $2 ORDER BY connection_class FOR UPDATE`, [
          toolsetId,
          name,
        ])
      ).rows.map(toPin);
      await tx.query(
        `WITH approved AS (
           UPDATE tool_pins p SET state = 'APPROVED', approved_fingerprint = candidate_fingerprint, candidate_fingerprint = NULL, candidate_declaration = NULL, updated_at = now()
           FROM (SELECT connection_class, approved_fingerprint AS old FROM tool_pins WHERE toolset_id = $1 AND tool_name = $2) o
           WHERE p.toolset_id = $1 AND p.tool_name = $2 AND p.connection_class = o.connection_class AND p.state = 'QUARANTINED' AND ($3::text IS NULL OR p.candidate_fingerprint = $3)
           RETURNING p.connection_class, o.old, p.approved_fingerprint)
         INSERT INTO tool_pin_events (toolset_id, connection_class, tool_name, kind, previous_fingerprint, fingerprint, actor)
         SELECT $1, connection_class, $2, 'APPROVED', old, approved_fingerprint, $4 FROM approved`,
        [toolsetId, name, fingerprint, actor],
      );
      const after = (
        await tx.query<DbRow>(`SELECT ${COLUMNS} FROM tool_pins WHERE toolset_id = $1 AND tool_name = $2 ORDER BY connection_class`, [toolsetId, name])
      ).rows.map(toPin);
      return { before, after };
    });
  }
}
