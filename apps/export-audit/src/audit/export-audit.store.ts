import { createHmac, randomUUID } from 'node:crypto';
import { canonicalize } from '@apphost/canonical-json';
import {
  AppHostError,
  ExportReasons,
  type ExportAuditRow,
  type ExportProjection,
  type ExportReason,
  type ExportStatus,
  type Principal,
  type SessionKey,
  type StoreReport,
} from '@apphost/contracts';
import type { ServiceDatabase } from '@apphost/persistence';
import { openPostgresStore, type ServiceContext, type StoreHandle } from '@apphost/runtime';
import { EXPORT_AUDIT_REVISION, ExportAttempts1768200000000 } from '../migrations/1768200000000-export-attempts';

export const EXPORT_AUDIT_SCHEMA = 'export_audit';

/** What an attempt targets; the same operation id must always name the same target. */
export interface ExportTarget {
  session: SessionKey;
  eventId: number;
  functionCallId: string;
  projection: ExportProjection;
}

/** A row as the store holds it (internal: carries the principal digest and the record id). */
export interface AttemptRow {
  tenant: string;
  operationId: string;
  exportId: string;
  target: ExportTarget;
  incarnation: number | null;
  recordId: string | null;
  toolsetId: string | null;
  principalDigest: string;
  decision: 'allow' | 'deny';
  status: ExportStatus;
  reason: string | null;
  bytes: number | null;
  releaseCount: number;
  createdAt: Date;
  updatedAt: Date;
  releasedAt: Date | null;
  retainUntil: Date;
}

interface DbRow {
  tenant: string;
  operation_id: string;
  export_id: string;
  app_name: string;
  user_id: string;
  session_id: string;
  incarnation: string | null;
  event_id: string;
  function_call_id: string;
  record_id: string | null;
  toolset_id: string | null;
  projection: ExportProjection;
  principal_digest: string;
  decision: 'allow' | 'deny';
  status: ExportStatus;
  reason: string | null;
  byte_count: string | null;
  release_count: number;
  created_at: Date;
  updated_at: Date;
  released_at: Date | null;
  retain_until: Date;
}

const toRow = (r: DbRow): AttemptRow => ({
  tenant: r.tenant,
  operationId: r.operation_id,
  exportId: r.export_id,
  target: {
    session: { tenant: r.tenant, appName: r.app_name, userId: r.user_id, sessionId: r.session_id },
    eventId: Number(r.event_id),
    functionCallId: r.function_call_id,
    projection: r.projection,
  },
  incarnation: r.incarnation === null ? null : Number(r.incarnation),
  recordId: r.record_id,
  toolsetId: r.toolset_id,
  principalDigest: r.principal_digest,
  decision: r.decision,
  status: r.status,
  reason: r.reason,
  bytes: r.byte_count === null ? null : Number(r.byte_count),
  releaseCount: r.release_count,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  releasedAt: r.released_at,
  retainUntil: r.retain_until,
});

/** The redacted public form: no principal digest, no record id, no toolset. */
export function redactRow(row: AttemptRow): ExportAuditRow {
  return {
    exportId: row.exportId,
    operationId: row.operationId,
    appName: row.target.session.appName,
    userId: row.target.session.userId,
    sessionId: row.target.session.sessionId,
    incarnation: row.incarnation,
    eventId: row.target.eventId,
    functionCallId: row.target.functionCallId,
    purpose: 'export',
    projection: row.target.projection,
    decision: row.decision,
    status: row.status,
    reason: row.reason,
    bytes: row.bytes,
    releaseCount: row.releaseCount,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    releasedAt: row.releasedAt?.toISOString() ?? null,
    retainUntil: row.retainUntil.toISOString(),
  };
}

/**
 * True when two targets are the same export (same session, event, call and projection). Field by field: the same
 * verdict as comparing their canonical forms (a target has exactly these members), without serializing both on every
 * insert and retry.
 */
export function sameTarget(a: ExportTarget, b: ExportTarget): boolean {
  const [s, t] = [a.session, b.session];
  return (
    s.tenant === t.tenant &&
    s.appName === t.appName &&
    s.userId === t.userId &&
    s.sessionId === t.sessionId &&
    a.eventId === b.eventId &&
    a.functionCallId === b.functionCallId &&
    a.projection === b.projection
  );
}

/** The audit store failed: the export fails closed with UNAVAILABLE `AUDIT_UNAVAILABLE`, releasing nothing. */
export const auditUnavailable = (cause: unknown) =>
  new AppHostError('UNAVAILABLE', 'the export audit store is unavailable; nothing was released', {
    details: ExportReasons.details('AUDIT_UNAVAILABLE', { cause: cause instanceof AppHostError ? cause.code : 'INTERNAL' }),
  });

const COLUMNS = `tenant, operation_id, export_id, app_name, user_id, session_id, incarnation, event_id, function_call_id, record_id, toolset_id,
  projection, principal_digest, decision, status, reason, byte_count, release_count, created_at, updated_at, released_at, retain_until`;

/**
 * The export audit store in the service's own schema `export_audit`: the persistence library's handle (schema,
 * migrations, store identity) plus the persisted store revision, both reported by `describe` so a profile can pin
 * them. Every write is one committed statement; the principal is stored only as an HMAC digest under a configured key.
 */
export class ExportAuditStore implements StoreHandle {
  private constructor(
    readonly database: ServiceDatabase,
    readonly revision: string,
    private readonly principalKey: Buffer,
    private readonly retentionMs: number,
  ) {}

  static async open(context: ServiceContext<{ EXPORT_PRINCIPAL_KEY: string; EXPORT_RETENTION_DAYS: number }>): Promise<ExportAuditStore> {
    const database = await openPostgresStore(context, { schema: EXPORT_AUDIT_SCHEMA, migrations: [ExportAttempts1768200000000] });
    try {
      const { rows } = await database.query<{ revision: string }>(`SELECT revision FROM export_store_revision`);
      const revision = rows[0]?.revision;
      if (revision !== EXPORT_AUDIT_REVISION) {
        throw new Error(`export audit store ${database.schema} is at revision ${String(revision)}; this build serves revision ${EXPORT_AUDIT_REVISION}`);
      }
      return new ExportAuditStore(
        database,
        revision,
        Buffer.from(context.config.EXPORT_PRINCIPAL_KEY, 'base64'),
        context.config.EXPORT_RETENTION_DAYS * 24 * 3600 * 1000,
      );
    } catch (error) {
      await database.close();
      throw error;
    }
  }

  /** HMAC-SHA256 of the principal's tenant and subject under the configured key: stable per principal, never reversible without the key. */
  principalDigest(principal: Pick<Principal, 'tenant' | 'subject'>): string {
    return createHmac('sha256', this.principalKey)
      .update(canonicalize({ tenant: principal.tenant, subject: principal.subject }))
      .digest('hex');
  }

  async load(tenant: string, operationId: string): Promise<AttemptRow | null> {
    const { rows } = await this.database.query<DbRow>(`SELECT ${COLUMNS} FROM export_attempts WHERE tenant = $1 AND operation_id = $2`, [tenant, operationId]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /**
   * Inserts the attempt unless its (tenant, operation id) exists, then answers the row that holds the key: of two
   * replicas racing one operation id, both read the one row.
   */
  async insert(input: {
    /** The new row's export id (generated when absent); a row that already held the key keeps its own. */
    exportId?: string;
    operationId: string;
    target: ExportTarget;
    incarnation: number | null;
    recordId: string | null;
    toolsetId: string | null;
    principalDigest: string;
    status: 'authorized' | 'denied';
    reason: string | null;
    bytes: number | null;
  }): Promise<AttemptRow> {
    const s = input.target.session;
    const { rows } = await this.database.query<DbRow>(
      `WITH ins AS (
         INSERT INTO export_attempts (tenant, operation_id, export_id, app_name, user_id, session_id, incarnation, event_id, function_call_id,
                                      record_id, toolset_id, purpose, projection, principal_digest, decision, status, reason, byte_count, retain_until)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'export', $12, $13, $14, $15, $16, $17, now() + ($18::bigint * interval '1 millisecond'))
         ON CONFLICT (tenant, operation_id) DO NOTHING
         RETURNING ${COLUMNS}
       )
       SELECT ${COLUMNS} FROM ins
       UNION ALL
       SELECT ${COLUMNS} FROM export_attempts WHERE tenant = $1 AND operation_id = $2 AND NOT EXISTS (SELECT 1 FROM ins)`,
      [
        s.tenant,
        input.operationId,
        input.exportId ?? randomUUID(),
        s.appName,
        s.userId,
        s.sessionId,
        input.incarnation,
        input.target.eventId,
        input.target.functionCallId,
        input.recordId,
        input.toolsetId,
        input.target.projection,
        input.principalDigest,
        input.status === 'denied' ? 'deny' : 'allow',
        input.status,
        input.reason,
        input.bytes,
        this.retentionMs,
      ],
    );
    if (rows[0]) return toRow(rows[0]);
    // A concurrent insert committed after this statement's snapshot: ON CONFLICT saw it, the SELECT could not.
    const winner = await this.load(s.tenant, input.operationId);
    if (!winner) throw new Error('export attempt row vanished between insert and read');
    return winner;
  }

  /** authorized → authorized with the resolved facts (a retry after a crash re-records them). */
  async authorize(
    tenant: string,
    operationId: string,
    facts: { incarnation: number; recordId: string; toolsetId: string | null; bytes: number },
  ): Promise<boolean> {
    const r = await this.database.query(
      `UPDATE export_attempts SET incarnation = $3, record_id = $4, toolset_id = $5, byte_count = $6, updated_at = now()
        WHERE tenant = $1 AND operation_id = $2 AND status IN ('authorized', 'released')`,
      [tenant, operationId, facts.incarnation, facts.recordId, facts.toolsetId, facts.bytes],
    );
    return r.rowCount === 1;
  }

  /**
   * The last step of an authorized attempt, in one statement: the session's bulk cap and the principal's rate are
   * judged against the rows at the instant of the write, then `denial` (a reason the caller found already, judged
   * after the limits so a narrowed limit is the reason recorded); if nothing denies, authorized | released → released
   * (counting the release), else → denied with the first reason. `row` is null when the row is already denied or
   * failed (final). Like any read-then-write under READ COMMITTED, releases racing in parallel each count only the
   * releases committed before them, so the cap can be passed by as many as race.
   *
   * Both counts stop at their limit, so the statement reads at most `bulkCap` + `perPrincipalPerMinute` rows however
   * long the history: every row counted for the cap has `release_count` ≥ 1, so `bulkCap` such rows already reach it
   * (and fewer are summed whole); a window holding `perPrincipalPerMinute` other attempts already denies. The verdict
   * is the one of the unbounded counts.
   */
  async settle(input: {
    tenant: string;
    operationId: string;
    session: SessionKey;
    incarnation: number;
    principalDigest: string;
    since: Date;
    bulkCap: number;
    perPrincipalPerMinute: number;
    denial: ExportReason | null;
  }): Promise<{ row: AttemptRow | null; deniedFor: ExportReason | null }> {
    const s = input.session;
    const { rows } = await this.database.query<Partial<DbRow> & { denied_for: ExportReason | null }>(
      `WITH verdict AS (
         SELECT CASE
                  WHEN (SELECT coalesce(sum(rc), 0) FROM (
                          SELECT release_count AS rc FROM export_attempts
                           WHERE tenant = $1 AND app_name = $3 AND user_id = $4 AND session_id = $5 AND incarnation = $6 AND release_count > 0
                           LIMIT $9::int) released) >= $9::int
                    THEN 'BULK_CAP_REACHED'
                  WHEN (SELECT count(*) FROM (
                          SELECT 1 FROM export_attempts
                           WHERE tenant = $1 AND principal_digest = $7 AND operation_id <> $2 AND status IN ('authorized', 'released')
                             AND created_at >= $8::timestamptz
                           LIMIT $10::int) recent) + 1 > $10::int
                    THEN 'RATE_LIMITED'
                  ELSE $11::text
                END AS denied_for
       ),
       upd AS (
         UPDATE export_attempts a
            SET status = CASE WHEN v.denied_for IS NULL THEN 'released' ELSE 'denied' END,
                decision = CASE WHEN v.denied_for IS NULL THEN 'allow' ELSE 'deny' END,
                reason = v.denied_for,
                release_count = a.release_count + CASE WHEN v.denied_for IS NULL THEN 1 ELSE 0 END,
                released_at = CASE WHEN v.denied_for IS NULL THEN now() ELSE a.released_at END,
                updated_at = now()
           FROM verdict v
          WHERE a.tenant = $1 AND a.operation_id = $2 AND a.status IN ('authorized', 'released')
          RETURNING ${COLUMNS}
       )
       SELECT v.denied_for, upd.* FROM verdict v LEFT JOIN upd ON true`,
      [
        input.tenant,
        input.operationId,
        s.appName,
        s.userId,
        s.sessionId,
        input.incarnation,
        input.principalDigest,
        input.since,
        input.bulkCap,
        input.perPrincipalPerMinute,
        input.denial,
      ],
    );
    const [r] = rows;
    return { row: r?.operation_id ? toRow(r as DbRow) : null, deniedFor: r?.denied_for ?? null };
  }

  /** → denied (final), keeping the release count a released row had. */
  async deny(tenant: string, operationId: string, reason: string): Promise<void> {
    await this.database.query(
      `UPDATE export_attempts SET status = 'denied', decision = 'deny', reason = $3, updated_at = now() WHERE tenant = $1 AND operation_id = $2 AND status <> 'denied'`,
      [tenant, operationId, reason],
    );
  }

  async list(session: SessionKey, limit: number): Promise<AttemptRow[]> {
    const { rows } = await this.database.query<DbRow>(
      `SELECT ${COLUMNS} FROM export_attempts WHERE tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4 ORDER BY created_at, operation_id LIMIT $5`,
      [session.tenant, session.appName, session.userId, session.sessionId, limit],
    );
    return rows.map(toRow);
  }

  /** Cascade purge in `delete` mode: the rows of the incarnation and below. Returns how many. */
  async deleteSession(session: SessionKey, incarnation: number): Promise<number> {
    const r = await this.database.query(
      `DELETE FROM export_attempts WHERE tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4 AND (incarnation IS NULL OR incarnation <= $5)`,
      [session.tenant, session.appName, session.userId, session.sessionId, incarnation],
    );
    return r.rowCount ?? 0;
  }

  /** The retention purge: every row past its retention deadline. Returns how many. */
  async purgeExpired(now: Date = new Date()): Promise<number> {
    const r = await this.database.query(`DELETE FROM export_attempts WHERE retain_until < $1`, [now]);
    return r.rowCount ?? 0;
  }

  async report(): Promise<StoreReport> {
    return { ...(await this.database.report()), revision: this.revision };
  }

  close(): Promise<void> {
    return this.database.close();
  }
}
