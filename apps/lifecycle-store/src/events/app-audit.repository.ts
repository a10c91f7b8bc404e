import { APP_AUDIT_METADATA_KEY, appAuditRecordSchema, type SessionKey } from '@apphost/contracts';
import type { Database, Queryable } from '@apphost/persistence';
import { foldSummary, type AppAuditSummary, type FoldedOperation } from './app-audit-summary';
import { finalizeEvents } from './finalizer';

const KEY = `tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`;
const keyParams = (k: SessionKey): unknown[] => [k.tenant, k.appName, k.userId, k.sessionId];

/** The record inside an app audit event (served by the partial index `session_events_app_audit_by_view`). */
const RECORD = `body->'customMetadata'->'${APP_AUDIT_METADATA_KEY}'`;

/** Who the summary event is by: the same author as the operation records, stamped as the ledger's own write. */
export const SUMMARY_AUTHOR = 'apphost-view';

export interface CompactionOutcome {
  compacted: number;
  remaining: number;
  oldestRemainingAt: string | null;
  retainedSealed: number;
  summary: { eventId: number; record: AppAuditSummary } | null;
}

interface AuditRow {
  event_id: string;
  created_at: Date;
  kind: string | null;
  decision: string | null;
  outcome: string | null;
  at: string | null;
  sealed: boolean;
  summary: unknown;
}

/**
 * App audit retention in one transaction. It first share-locks the lifecycle record while it is `ACTIVE(n)` (a
 * deletion waits for it) and row-locks the session row (appends and other compactions of the session wait), so the
 * View's records it then reads are exactly the committed ones and nothing lands between the read and the delete.
 * Only events with `audience = 'app_audit'` whose record names the View are ever read or deleted.
 */
export class AppAuditRepository {
  constructor(private readonly db: Database) {}

  /** Null when the session is not `ACTIVE(incarnation)` (nothing done: the caller says why). */
  compact(key: SessionKey, incarnation: number, viewId: string, keepLast: number, olderThan: Date | null): Promise<CompactionOutcome | null> {
    return this.db.transaction(async (tx) => {
      if (!(await this.lockSession(tx, key, incarnation))) return null;
      const rows = await this.recordsOf(tx, key, incarnation, viewId);
      // Summaries of the View (normally one), newest first; one that does not parse is left alone, never folded away.
      const summaries = rows.flatMap((r) => {
        const record = r.kind === 'summary' ? summaryOf(r.summary) : null;
        return record ? [{ eventId: Number(r.event_id), record }] : [];
      });
      const operations = rows.filter((r) => r.kind === 'operation');
      const sealed = operations.filter((r) => r.sealed);
      const unsealed = operations.filter((r) => !r.sealed);
      // Newest first: the first `keepLast` stay unless they are older than `olderThan`.
      const doomed = unsealed.filter((r, rank) => rank >= keepLast || (olderThan !== null && r.created_at < olderThan));
      const folding = new Set(doomed);
      const left = unsealed.filter((r) => !folding.has(r));
      const oldest = left.at(-1);
      const base = { remaining: left.length, oldestRemainingAt: oldest ? oldest.created_at.toISOString() : null, retainedSealed: sealed.length };
      if (doomed.length === 0) return { ...base, compacted: 0, summary: summaries[0] ?? null };
      const record = foldSummary(
        viewId,
        summaries.map((s) => s.record),
        doomed.map(foldedOf),
      );
      await tx.query(`DELETE FROM session_events WHERE ${KEY} AND incarnation = $5 AND audience = 'app_audit' AND event_id = ANY ($6::bigint[])`, [
        ...keyParams(key),
        incarnation,
        [...doomed.map((r) => Number(r.event_id)), ...summaries.map((s) => s.eventId)],
      ]);
      const eventId = await this.appendSummary(tx, key, incarnation, record);
      return { ...base, compacted: doomed.length, summary: { eventId, record } };
    });
  }

  private async lockSession(tx: Queryable, key: SessionKey, incarnation: number): Promise<boolean> {
    const { rows } = await tx.query(
      `WITH r AS (
         SELECT 1 FROM lifecycle_records WHERE ${KEY} AND state = 'ACTIVE' AND incarnation = $5 FOR SHARE
       )
       SELECT 1 FROM session_rows WHERE ${KEY} AND incarnation = $5 AND EXISTS (SELECT 1 FROM r) FOR UPDATE`,
      [...keyParams(key), incarnation],
    );
    return rows.length === 1;
  }

  /** The View's operation and summary records, newest first (only what compaction needs of each). */
  private async recordsOf(tx: Queryable, key: SessionKey, incarnation: number, viewId: string): Promise<AuditRow[]> {
    const { rows } = await tx.query<AuditRow>(
      `SELECT event_id, created_at, ${RECORD}->>'kind' AS kind, ${RECORD}->>'decision' AS decision, ${RECORD}->>'outcome' AS outcome,
              ${RECORD}->>'at' AS at,
              (jsonb_typeof(body->'sealedResultRefs') = 'object' AND body->'sealedResultRefs' <> '{}'::jsonb) IS TRUE AS sealed,
              CASE WHEN ${RECORD}->>'kind' = 'summary' THEN ${RECORD} END AS summary
         FROM session_events
        WHERE ${KEY} AND incarnation = $5 AND audience = 'app_audit' AND (${RECORD}->>'viewId') = $6
        ORDER BY event_id DESC`,
      [...keyParams(key), incarnation, viewId],
    );
    return rows;
  }

  /** The new summary, finalized like any append, under the next id of the session's counter (ids are never reused). */
  private async appendSummary(tx: Queryable, key: SessionKey, incarnation: number, record: AppAuditSummary): Promise<number> {
    const [event] = finalizeEvents([{ author: SUMMARY_AUTHOR, customMetadata: { [APP_AUDIT_METADATA_KEY]: record } }], {
      path: 'reconciliation',
      ingress: 'mcp_app',
    });
    const { rows } = await tx.query<{ event_id: string }>(
      `WITH s AS (
         UPDATE session_rows SET last_event_id = last_event_id + 1 WHERE ${KEY} AND incarnation = $5 RETURNING last_event_id
       )
       INSERT INTO session_events (tenant, app_name, user_id, session_id, incarnation, event_id, imported, author, audience, invocation_origin, emitter, immediate_caller, body)
       SELECT $1, $2, $3, $4, $5, s.last_event_id, false, $6, $7, $8, $9, $10, $11::jsonb FROM s
       RETURNING event_id`,
      [...keyParams(key), incarnation, event.author, event.audience, event.invocationOrigin, event.emitter, event.immediateCaller, JSON.stringify(event)],
    );
    return Number(rows[0].event_id);
  }
}

function summaryOf(value: unknown): AppAuditSummary | null {
  const parsed = appAuditRecordSchema.safeParse(value);
  return parsed.success && parsed.data.kind === 'summary' ? parsed.data : null;
}

function foldedOf(row: AuditRow): FoldedOperation {
  const at = row.at !== null && !Number.isNaN(Date.parse(row.at)) ? row.at : row.created_at.toISOString();
  return { decision: row.decision ?? 'unknown', outcome: row.outcome ?? 'unknown', at };
}
