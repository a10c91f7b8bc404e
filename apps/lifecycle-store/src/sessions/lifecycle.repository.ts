import type { CascadeProgress, SessionKey, SessionState, SessionSummary } from '@apphost/contracts';
import type { Database, Queryable } from '@apphost/persistence';
import type { StoredEvent } from '../events/event-ledger.repository';

/** `tenant, app_name, user_id, session_id` bound to $1..$4 in every statement below. */
const KEY = `tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`;
const keyParams = (k: SessionKey): unknown[] => [k.tenant, k.appName, k.userId, k.sessionId];

export interface LifecycleRecord {
  key: SessionKey;
  incarnation: number;
  state: SessionState;
  version: number;
  creationOperationId: string | null;
  /** Age of the CREATING reservation by the database clock (no skew between replicas). */
  reservedAgeMs: number | null;
  adopted: boolean;
  cascade: CascadeProgress | null;
  updatedAt: string;
}

export interface SessionRow {
  incarnation: number | null;
  creationOperationId: string | null;
  importDigest: string | null;
  importCount: number;
  adopted: boolean;
  lastEventId: number;
}

interface RecordRow {
  incarnation: string;
  state: SessionState;
  version: string;
  creation_operation_id: string | null;
  reserved_age_ms: number | null;
  adopted: boolean;
  cascade: CascadeProgress | null;
  updated_at: Date;
}

const RECORD_COLUMNS = `incarnation, state, version, creation_operation_id, adopted, cascade, updated_at,
  (EXTRACT(EPOCH FROM (now() - reserved_at)) * 1000)::float8 AS reserved_age_ms`;
/** The same columns read from `lifecycle_records r` in a statement that joins other tables. */
const R_RECORD_COLUMNS = RECORD_COLUMNS.replace(/\b(incarnation|state|version|creation_operation_id|adopted|cascade|updated_at|reserved_at)\b/g, 'r.$1');

/**
 * The session's record as `r`, or one row of NULLs when there is none (`found` tells which), and whether a legacy
 * (never adopted) session row waits for lazy adoption: the head of every read that adopts lazily.
 */
const RECORD_OR_NONE = `FROM (SELECT 1) AS one LEFT JOIN lifecycle_records r ON r.tenant = $1 AND r.app_name = $2 AND r.user_id = $3 AND r.session_id = $4`;
const LEGACY_COLUMN = `(r.tenant IS NULL AND EXISTS (SELECT 1 FROM session_rows s WHERE s.tenant = $1 AND s.app_name = $2 AND s.user_id = $3 AND s.session_id = $4 AND s.incarnation IS NULL)) AS legacy`;
const PROBED_COLUMNS = `r.tenant IS NOT NULL AS found, ${R_RECORD_COLUMNS}, ${LEGACY_COLUMN}`;

/** Whose revocation a standing read asks about: the principal's tenant and `subjectDigest`. */
export interface RevocationKey {
  tenant: string;
  subjectDigest: string;
}

/** One snapshot of what a View needs to know first (`standing`). */
export interface Standing {
  /** When the principal was revoked; null when it is not. */
  revokedAt: Date | null;
  record: LifecycleRecord | null;
  /** No record, but a legacy session row that lazy adoption would turn into one. */
  legacy: boolean;
  /** The asked event on the record's incarnation, read only when the record is ACTIVE (null otherwise, or absent). */
  event: StoredEvent | null;
}

function toRecord(key: SessionKey, row: RecordRow): LifecycleRecord {
  return {
    key,
    incarnation: Number(row.incarnation),
    state: row.state,
    version: Number(row.version),
    creationOperationId: row.creation_operation_id,
    reservedAgeMs: row.reserved_age_ms === null ? null : Number(row.reserved_age_ms),
    adopted: row.adopted,
    cascade: row.cascade,
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** Why a guarded creation commit wrote nothing. */
export type CommitOutcome = 'committed' | 'fence-retired' | 'row-exists';

/** Why a reclaim did not reserve. */
export type ReclaimOutcome = { kind: 'reserved'; record: LifecycleRecord } | { kind: 'fence-moved' } | { kind: 'row-exists' } | { kind: 'cas-lost' };

/** A finalized imported event; its stamped protected fields are copied into columns by the insert. */
export interface ImportedEventRow {
  body: Record<string, unknown>;
}

/**
 * All SQL of session lifecycles. Every transition is a guarded UPDATE (`WHERE state AND incarnation AND version`);
 * zero rows means someone else moved first, and the caller re-reads and answers with a typed error. The database
 * trigger `lifecycle_guard_transition` refuses illegal transitions independently.
 */
export class LifecycleRepository {
  constructor(private readonly db: Database) {}

  /** An owner's sessions that are not DELETED, newest first (the primary key's prefix bounds the scan). */
  async listByOwner(owner: Omit<SessionKey, 'sessionId'>, limit: number): Promise<SessionSummary[]> {
    const { rows } = await this.db.query<{ session_id: string; incarnation: string | number; state: SessionSummary['state']; created_at: Date }>(
      `SELECT r.session_id, r.incarnation, r.state, COALESCE(s.created_at, r.reserved_at, now()) AS created_at
         FROM lifecycle_records r
         LEFT JOIN session_rows s USING (tenant, app_name, user_id, session_id)
        WHERE r.tenant = $1 AND r.app_name = $2 AND r.user_id = $3 AND r.state <> 'DELETED'
        ORDER BY created_at DESC, r.session_id
        LIMIT $4`,
      [owner.tenant, owner.appName, owner.userId, limit],
    );
    return rows.map((row) => ({
      sessionId: row.session_id,
      incarnation: Number(row.incarnation),
      state: row.state,
      createdAt: new Date(row.created_at).toISOString(),
    }));
  }

  async load(key: SessionKey): Promise<LifecycleRecord | null> {
    const { rows } = await this.db.query<RecordRow>(`SELECT ${RECORD_COLUMNS} FROM lifecycle_records WHERE ${KEY}`, keyParams(key));
    return rows[0] ? toRecord(key, rows[0]) : null;
  }

  /**
   * The record, or when there is none whether a legacy (never adopted) session row exists: one round trip, so the
   * common paths pay nothing for lazy adoption.
   */
  async probe(key: SessionKey): Promise<{ record: LifecycleRecord | null; legacy: boolean }> {
    const { record, legacy } = await this.probeWith(key, {}, []);
    return { record, legacy };
  }

  /**
   * `probe`, and in the same statement (one round trip, one snapshot) each of `reads` on an `ACTIVE` record: a
   * subquery that may name the record's incarnation as `r.incarnation`, whose first row comes back as JSON (null when
   * it has none, or when the record is not ACTIVE). The session key is bound to $1..$4 and `params` from $5 on.
   */
  async probeWith<K extends string>(
    key: SessionKey,
    reads: Record<K, string>,
    params: readonly unknown[],
  ): Promise<{ record: LifecycleRecord | null; legacy: boolean; read: Record<K, unknown> }> {
    const names = Object.keys(reads) as K[];
    const columns = names.map((name) => `, CASE WHEN r.state = 'ACTIVE' THEN (SELECT to_jsonb(x) FROM (${reads[name]}) AS x) END AS "read_${name}"`).join('');
    const { rows } = await this.db.query<RecordRow & { legacy: boolean; found: boolean } & Record<string, unknown>>(
      `SELECT ${PROBED_COLUMNS}${columns}
         ${RECORD_OR_NONE}`,
      [...keyParams(key), ...params],
    );
    const row = rows[0];
    const read = Object.fromEntries(names.map((name) => [name, row?.[`read_${name}`] ?? null])) as Record<K, unknown>;
    return { record: row?.found ? toRecord(key, row) : null, legacy: Boolean(row?.legacy), read };
  }

  /**
   * The principal's revocation, the session's record (or whether a legacy row waits for adoption) and, when the record
   * is ACTIVE, its incarnation's event `eventId` (none asked: null): one statement, so one round trip and one snapshot
   * instead of three reads. Serves `get-session-standing` and `get-widget-standing`.
   */
  async standing(key: SessionKey, principal: RevocationKey, eventId: number | null): Promise<Standing> {
    const { rows } = await this.db.query<
      RecordRow & {
        found: boolean;
        legacy: boolean;
        revoked_at: Date | null;
        event_id: string | null;
        event_created_at: Date | null;
        event_body: Record<string, unknown> | null;
      }
    >(
      `SELECT ${PROBED_COLUMNS},
              (SELECT p.revoked_at FROM principal_revocations p WHERE p.tenant = $5 AND p.subject_digest = $6) AS revoked_at,
              e.event_id, e.created_at AS event_created_at, e.body AS event_body
         ${RECORD_OR_NONE}
         LEFT JOIN session_events e ON r.state = 'ACTIVE' AND e.tenant = $1 AND e.app_name = $2 AND e.user_id = $3 AND e.session_id = $4
                                   AND e.incarnation = r.incarnation AND e.event_id = $7`,
      [...keyParams(key), principal.tenant, principal.subjectDigest, eventId],
    );
    const row = rows[0];
    if (!row) throw new Error('standing: the statement returned no row'); // (SELECT 1) always yields one
    const record = row.found ? toRecord(key, row) : null;
    const event =
      record && row.event_id !== null && row.event_body !== null && row.event_created_at !== null
        ? { id: Number(row.event_id), incarnation: record.incarnation, createdAt: row.event_created_at, body: row.event_body }
        : null;
    return { revokedAt: row.revoked_at, record, legacy: row.legacy, event };
  }

  async loadSessionRow(key: SessionKey, via: Queryable = this.db): Promise<SessionRow | null> {
    const { rows } = await via.query<{
      incarnation: string | null;
      creation_operation_id: string | null;
      import_digest: string | null;
      import_count: number;
      adopted_at: Date | null;
      last_event_id: string;
    }>(`SELECT incarnation, creation_operation_id, import_digest, import_count, adopted_at, last_event_id FROM session_rows WHERE ${KEY}`, keyParams(key));
    const row = rows[0];
    if (!row) return null;
    return {
      incarnation: row.incarnation === null ? null : Number(row.incarnation),
      creationOperationId: row.creation_operation_id,
      importDigest: row.import_digest,
      importCount: row.import_count,
      adopted: row.adopted_at !== null,
      lastEventId: Number(row.last_event_id),
    };
  }

  /**
   * Migration: a session row with no lifecycle record (and no receipt) becomes `ACTIVE(1)` with an adoption marker,
   * in one transaction; false when there was nothing to adopt or another replica adopted it first.
   */
  async adoptLegacy(key: SessionKey): Promise<boolean> {
    return this.db
      .transaction(async (tx) => {
        const claimed = await tx.query(
          `UPDATE session_rows SET incarnation = 1, adopted_at = now()
            WHERE ${KEY} AND incarnation IS NULL AND creation_operation_id IS NULL
              AND NOT EXISTS (SELECT 1 FROM lifecycle_records WHERE ${KEY})
            RETURNING 1`,
          keyParams(key),
        );
        if (claimed.rowCount === 0) throw new NothingWritten();
        const inserted = await tx.query(
          `INSERT INTO lifecycle_records (tenant, app_name, user_id, session_id, incarnation, state, version, adopted, adoption)
           VALUES ($1, $2, $3, $4, 1, 'ACTIVE', 1, true, jsonb_build_object('receipt', 'adoption', 'adoptedAt', now()))
           ON CONFLICT DO NOTHING RETURNING 1`,
          keyParams(key),
        );
        if (inserted.rowCount === 0) throw new NothingWritten();
        await tx.query(
          `INSERT INTO session_fences (tenant, app_name, user_id, session_id, fence_token) VALUES ($1, $2, $3, $4, 1) ON CONFLICT DO NOTHING`,
          keyParams(key),
        );
        return true;
      })
      .catch((error: unknown) => {
        if (error instanceof NothingWritten) return false;
        throw error;
      });
  }

  /** ABSENT → CREATING(1), with the fence set to the new creator's incarnation in the same statement. */
  async reserveFromAbsent(key: SessionKey, operationId: string): Promise<LifecycleRecord | null> {
    const { rows } = await this.db.query<RecordRow>(
      `WITH rec AS (
         INSERT INTO lifecycle_records (tenant, app_name, user_id, session_id, incarnation, state, version, creation_operation_id, reserved_at)
         SELECT $1, $2, $3, $4, 1, 'CREATING', 1, $5, now()
          WHERE NOT EXISTS (SELECT 1 FROM session_rows WHERE ${KEY})
         ON CONFLICT DO NOTHING
         RETURNING *
       ), fence AS (
         INSERT INTO session_fences (tenant, app_name, user_id, session_id, fence_token)
         SELECT tenant, app_name, user_id, session_id, incarnation FROM rec
         ON CONFLICT (tenant, app_name, user_id, session_id) DO UPDATE SET fence_token = EXCLUDED.fence_token, updated_at = now()
         RETURNING 1
       )
       SELECT ${RECORD_COLUMNS} FROM rec`,
      [...keyParams(key), operationId],
    );
    return rows[0] ? toRecord(key, rows[0]) : null;
  }

  /** DELETED(n) → CREATING(n+1); the fence moves to n+1 in the same statement. */
  async reserveAfterDeleted(key: SessionKey, operationId: string, incarnation: number, version: number): Promise<LifecycleRecord | null> {
    const { rows } = await this.db.query<RecordRow>(
      `WITH rec AS (
         UPDATE lifecycle_records
            SET state = 'CREATING', incarnation = incarnation + 1, version = version + 1, creation_operation_id = $5,
                reserved_at = now(), adopted = false, cascade = NULL, updated_at = now()
          WHERE ${KEY} AND state = 'DELETED' AND incarnation = $6 AND version = $7
          RETURNING *
       ), fence AS (
         INSERT INTO session_fences (tenant, app_name, user_id, session_id, fence_token)
         SELECT tenant, app_name, user_id, session_id, incarnation FROM rec
         ON CONFLICT (tenant, app_name, user_id, session_id) DO UPDATE SET fence_token = EXCLUDED.fence_token, updated_at = now()
         RETURNING 1
       )
       SELECT ${RECORD_COLUMNS} FROM rec`,
      [...keyParams(key), operationId, incarnation, version],
    );
    return rows[0] ? toRecord(key, rows[0]) : null;
  }

  /**
   * Reclaims an abandoned CREATING(n) for a new creator as CREATING(n+1). The fence advances FIRST, by a guarded
   * UPDATE that waits for a creator's in-flight commit (which holds the fence row); then, in a new statement (so a
   * creator that just committed is visible), no session row may exist; then the record CAS. Any miss rolls back.
   */
  async reclaim(key: SessionKey, operationId: string, stale: LifecycleRecord, leaseMs: number | null): Promise<ReclaimOutcome> {
    return this.db
      .transaction(async (tx): Promise<ReclaimOutcome> => {
        const fence = await tx.query(`UPDATE session_fences SET fence_token = $6, updated_at = now() WHERE ${KEY} AND fence_token = $5 RETURNING 1`, [
          ...keyParams(key),
          stale.incarnation,
          stale.incarnation + 1,
        ]);
        if (fence.rowCount === 0) throw new Outcome({ kind: 'fence-moved' });
        const row = await tx.query(`SELECT 1 FROM session_rows WHERE ${KEY}`, keyParams(key));
        if (row.rows.length > 0) throw new Outcome({ kind: 'row-exists' });
        const { rows } = await tx.query<RecordRow>(
          `UPDATE lifecycle_records
              SET incarnation = incarnation + 1, version = version + 1, creation_operation_id = $5, reserved_at = now(), updated_at = now()
            WHERE ${KEY} AND state = 'CREATING' AND incarnation = $6 AND version = $7 AND creation_operation_id = $8
              AND ($9::float8 IS NULL OR reserved_at <= now() - make_interval(secs => $9::float8 / 1000))
            RETURNING ${RECORD_COLUMNS}`,
          [...keyParams(key), operationId, stale.incarnation, stale.version, stale.creationOperationId, leaseMs],
        );
        if (!rows[0]) throw new Outcome({ kind: 'cas-lost' });
        return { kind: 'reserved', record: toRecord(key, rows[0]) };
      })
      .catch((error: unknown) => {
        if (error instanceof Outcome) return error.outcome;
        throw error;
      });
  }

  /**
   * `createIfFenceCurrent`: in ONE transaction, a guarded update of the fence row (it must still name this creator's
   * incarnation) and — in the same statement, only if that update took the row — the session row with its creation
   * receipt and the finalized imported events. Fence retired or session row already there → ROLLBACK (nothing of this
   * creator is written). One statement saves a round trip while the fence lock is held; the statement waits for a
   * reclaimer holding the fence row and then re-checks the token on the row's newest version (READ COMMITTED), and
   * `ON CONFLICT DO NOTHING` sees a session row committed meanwhile. `inside` runs after that statement and before
   * COMMIT: the fence row is held and the transaction is open (a fault point holding it there).
   */
  async createIfFenceCurrent(
    key: SessionKey,
    receipt: { incarnation: number; operationId: string; digest: string },
    imported: ImportedEventRow[],
    inside: () => Promise<void>,
  ): Promise<CommitOutcome> {
    return this.db
      .transaction(async (tx): Promise<CommitOutcome> => {
        const { rows } = await tx.query<{ fenced: string; inserted: string }>(
          `WITH f AS (
             UPDATE session_fences SET updated_at = now() WHERE ${KEY} AND fence_token = $5::bigint RETURNING 1
           ), s AS (
             INSERT INTO session_rows (tenant, app_name, user_id, session_id, incarnation, creation_operation_id, import_digest, import_count, last_event_id)
             SELECT $1, $2, $3, $4, $5::bigint, $6, $7, $8::integer, $8::bigint WHERE EXISTS (SELECT 1 FROM f)
             ON CONFLICT DO NOTHING
             RETURNING incarnation
           ), e AS (
             INSERT INTO session_events (tenant, app_name, user_id, session_id, incarnation, event_id, imported, author, audience, invocation_origin, emitter, immediate_caller, body)
             SELECT $1, $2, $3, $4, s.incarnation, d.ord, true, d.doc->>'author', d.doc->>'audience', d.doc->>'invocationOrigin', d.doc->>'emitter', d.doc->>'immediateCaller', d.doc
               FROM s, jsonb_array_elements($9::jsonb) WITH ORDINALITY AS d(doc, ord)
             RETURNING 1
           )
           SELECT (SELECT count(*) FROM f) AS fenced, (SELECT count(*) FROM s) AS inserted, (SELECT count(*) FROM e) AS events`,
          [...keyParams(key), receipt.incarnation, receipt.operationId, receipt.digest, imported.length, JSON.stringify(imported.map((e) => e.body))],
        );
        if (Number(rows[0]?.fenced ?? 0) === 0) throw new CommitMiss('fence-retired');
        if (Number(rows[0]?.inserted ?? 0) === 0) throw new CommitMiss('row-exists');
        await inside();
        return 'committed';
      })
      .catch((error: unknown) => {
        if (error instanceof CommitMiss) return error.outcome;
        throw error;
      });
  }

  /** CREATING(n) → ACTIVE(n), only if the committed session row carries this exact receipt. */
  async activate(key: SessionKey, receipt: { incarnation: number; operationId: string; digest: string }, version: number): Promise<LifecycleRecord | null> {
    const { rows } = await this.db.query<RecordRow>(
      `UPDATE lifecycle_records r
          SET state = 'ACTIVE', version = r.version + 1, reserved_at = NULL, updated_at = now()
         FROM session_rows s
        WHERE r.tenant = $1 AND r.app_name = $2 AND r.user_id = $3 AND r.session_id = $4
          AND r.state = 'CREATING' AND r.incarnation = $5 AND r.version = $6 AND r.creation_operation_id = $7
          AND s.tenant = $1 AND s.app_name = $2 AND s.user_id = $3 AND s.session_id = $4
          AND s.incarnation = $5 AND s.creation_operation_id = $7 AND s.import_digest = $8
        RETURNING r.incarnation, r.state, r.version, r.creation_operation_id, r.adopted, r.cascade, r.updated_at, NULL::float8 AS reserved_age_ms`,
      [...keyParams(key), receipt.incarnation, version, receipt.operationId, receipt.digest],
    );
    return rows[0] ? toRecord(key, rows[0]) : null;
  }

  /** The imported events committed with a receipt, in id order (for receipt verification during recovery). */
  async importedEvents(key: SessionKey, incarnation: number): Promise<Record<string, unknown>[]> {
    const { rows } = await this.db.query<{ body: Record<string, unknown> }>(
      `SELECT body FROM session_events WHERE ${KEY} AND incarnation = $5 AND imported ORDER BY event_id`,
      [...keyParams(key), incarnation],
    );
    return rows.map((r) => r.body);
  }

  /** ACTIVE(n) → DELETING(n) with the cascade plan. */
  async beginDeletion(key: SessionKey, incarnation: number, version: number, cascade: CascadeProgress): Promise<LifecycleRecord | null> {
    const { rows } = await this.db.query<RecordRow>(
      `UPDATE lifecycle_records SET state = 'DELETING', version = version + 1, cascade = $7::jsonb, updated_at = now()
        WHERE ${KEY} AND state = 'ACTIVE' AND incarnation = $5 AND version = $6
        RETURNING ${RECORD_COLUMNS}`,
      [...keyParams(key), incarnation, version, JSON.stringify(cascade)],
    );
    return rows[0] ? toRecord(key, rows[0]) : null;
  }

  /**
   * ACTIVE(n) → DELETING(n) without a prior read: guarded by the state (and by the incarnation when the caller expects
   * one) instead of a read version, since ACTIVE(n) → DELETING(n) is legal from any version of ACTIVE(n) and the
   * trigger still checks the +1 version step. It waits for in-flight appends (their share lock) like the CAS above.
   * Null → nothing written (not ACTIVE, other incarnation, no record, a legacy row): the caller reads and decides.
   */
  async beginDeletionIfActive(key: SessionKey, expectedIncarnation: number | null, cascade: CascadeProgress): Promise<LifecycleRecord | null> {
    const { rows } = await this.db.query<RecordRow>(
      `UPDATE lifecycle_records SET state = 'DELETING', version = version + 1, cascade = $6::jsonb, updated_at = now()
        WHERE ${KEY} AND state = 'ACTIVE' AND ($5::bigint IS NULL OR incarnation = $5::bigint)
        RETURNING ${RECORD_COLUMNS}`,
      [...keyParams(key), expectedIncarnation, JSON.stringify(cascade)],
    );
    return rows[0] ? toRecord(key, rows[0]) : null;
  }

  /** DELETING(n) → DELETING(n) with new cascade progress. */
  async recordProgress(key: SessionKey, incarnation: number, version: number, cascade: CascadeProgress): Promise<LifecycleRecord | null> {
    const { rows } = await this.db.query<RecordRow>(
      `UPDATE lifecycle_records SET version = version + 1, cascade = $7::jsonb, updated_at = now()
        WHERE ${KEY} AND state = 'DELETING' AND incarnation = $5 AND version = $6
        RETURNING ${RECORD_COLUMNS}`,
      [...keyParams(key), incarnation, version, JSON.stringify(cascade)],
    );
    return rows[0] ? toRecord(key, rows[0]) : null;
  }

  /**
   * The local phase of the cascade, one statement: marks the session purged (guarded) and deletes the session row,
   * every event, every pending message of this and older incarnations and the session's ended-View tombstones (including rows a retired creator might have left elsewhere).
   */
  async purgeSession(key: SessionKey, incarnation: number, version: number): Promise<LifecycleRecord | null> {
    const { rows } = await this.db.query<RecordRow>(
      `WITH rec AS (
         UPDATE lifecycle_records SET version = version + 1, cascade = jsonb_set(cascade, '{sessionPurged}', 'true'), updated_at = now()
          WHERE ${KEY} AND state = 'DELETING' AND incarnation = $5 AND version = $6
          RETURNING *
       ), ev AS (
         DELETE FROM session_events WHERE ${KEY} AND incarnation <= (SELECT incarnation FROM rec) RETURNING 1
       ), msg AS (
         DELETE FROM pending_messages WHERE ${KEY} AND incarnation <= (SELECT incarnation FROM rec) RETURNING 1
       ), ended AS (
         DELETE FROM ended_view_messages WHERE ${KEY} AND EXISTS (SELECT 1 FROM rec) RETURNING 1
       ), s AS (
         DELETE FROM session_rows WHERE ${KEY} AND EXISTS (SELECT 1 FROM rec) RETURNING 1
       )
       SELECT ${RECORD_COLUMNS}, (SELECT count(*) FROM ev) AS events, (SELECT count(*) FROM s) AS session_rows_deleted FROM rec`,
      [...keyParams(key), incarnation, version],
    );
    return rows[0] ? toRecord(key, rows[0]) : null;
  }

  /** DELETING(n) → DELETED(n), only when the record itself says every step is done. */
  async finishDeletion(key: SessionKey, incarnation: number, version: number): Promise<LifecycleRecord | null> {
    const { rows } = await this.db.query<RecordRow>(
      `UPDATE lifecycle_records SET state = 'DELETED', version = version + 1, updated_at = now()
        WHERE ${KEY} AND state = 'DELETING' AND incarnation = $5 AND version = $6
          AND (cascade->>'sessionPurged')::boolean
          AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(cascade->'participants') p WHERE NOT (p->>'purged')::boolean)
        RETURNING ${RECORD_COLUMNS}`,
      [...keyParams(key), incarnation, version],
    );
    return rows[0] ? toRecord(key, rows[0]) : null;
  }

  /** Keys of unfinished lifecycles, for recovery at startup. */
  async unfinished(state: 'CREATING' | 'DELETING', limit: number): Promise<SessionKey[]> {
    const { rows } = await this.db.query<{ tenant: string; app_name: string; user_id: string; session_id: string }>(
      `SELECT tenant, app_name, user_id, session_id FROM lifecycle_records WHERE state = $1 ORDER BY updated_at LIMIT $2`,
      [state, limit],
    );
    return rows.map((r) => ({ tenant: r.tenant, appName: r.app_name, userId: r.user_id, sessionId: r.session_id }));
  }
}

class NothingWritten extends Error {}
class Outcome extends Error {
  constructor(readonly outcome: ReclaimOutcome) {
    super(outcome.kind);
  }
}
class CommitMiss extends Error {
  constructor(readonly outcome: CommitOutcome) {
    super(outcome);
  }
}
