import type { SessionKey } from '@apphost/contracts';
import type { Database } from '@apphost/persistence';

/** A PENDING record as GC and the recovery pass see it: its full key, which is what the ledger is asked about. */
export interface PendingRecordKey {
  session: SessionKey;
  incarnation: number;
  functionCallId: string;
  recordId: string;
}

/** A PENDING record the ledger says an event references. */
export interface AppendedRecord extends PendingRecordKey {
  eventId: string;
}

interface KeyRow {
  tenant: string;
  app_name: string;
  user_id: string;
  session_id: string;
  incarnation: string;
  function_call_id: string;
  record_id: string;
}

const KEY_COLUMNS = 'tenant, app_name, user_id, session_id, incarnation, function_call_id, record_id';
/** The batch of keys as rows: `$1` is a JSON array of `toRow`s; byte collation, so the primary key serves the join. */
const KEYS_FROM = (extra = '') => `jsonb_to_recordset($1::jsonb) AS w (tenant text COLLATE "C", app_name text COLLATE "C", user_id text COLLATE "C",
  session_id text COLLATE "C", incarnation bigint, function_call_id text, record_id text COLLATE "C"${extra})`;
const KEY_JOIN = `r.tenant = w.tenant AND r.app_name = w.app_name AND r.user_id = w.user_id AND r.session_id = w.session_id
  AND r.incarnation = w.incarnation AND r.record_id = w.record_id AND r.function_call_id = w.function_call_id`;
const FENCED = `EXISTS (SELECT 1 FROM session_incarnations s WHERE s.tenant = r.tenant AND s.app_name = r.app_name
  AND s.user_id = r.user_id AND s.session_id = r.session_id AND s.min_live > r.incarnation)`;

const toRow = (k: PendingRecordKey, eventId?: string) => ({
  tenant: k.session.tenant,
  app_name: k.session.appName,
  user_id: k.session.userId,
  session_id: k.session.sessionId,
  incarnation: k.incarnation,
  function_call_id: k.functionCallId,
  record_id: k.recordId,
  ...(eventId === undefined ? {} : { event_id: eventId }),
});
const fromRow = (r: KeyRow): PendingRecordKey => ({
  session: { tenant: r.tenant, appName: r.app_name, userId: r.user_id, sessionId: r.session_id },
  incarnation: Number(r.incarnation),
  functionCallId: r.function_call_id,
  recordId: r.record_id,
});

/**
 * The statements of GC and the recovery pass. Reading candidates takes no lock (the ledger is asked over the bus
 * in between); every write re-checks `state = 'PENDING'` on the row itself, so a commit or resolve that bound a
 * record meanwhile always wins, exactly as with the single-statement collector.
 */
export class SealedCollectorRepository {
  constructor(private readonly db: Database) {}

  async collectExpiredUploads(limit: number): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM sealed_uploads WHERE upload_id IN (SELECT upload_id FROM sealed_uploads WHERE expires_at < now() LIMIT $1)`,
      [limit],
    );
    return rowCount;
  }

  /** PENDING records past their TTL, the longest expired first. */
  async expiredPending(limit: number): Promise<PendingRecordKey[]> {
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM sealed_records WHERE state = 'PENDING' AND expires_at < now() ORDER BY expires_at LIMIT $1`,
      [limit],
    );
    return rows.map(fromRow);
  }

  /** PENDING records older than `ageMs` the recovery pass has not asked the ledger about yet, oldest first. */
  async uncheckedPending(ageMs: number, limit: number): Promise<PendingRecordKey[]> {
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM sealed_records
        WHERE state = 'PENDING' AND ledger_checked_at IS NULL AND created_at < now() - make_interval(secs => $1::double precision / 1000)
        ORDER BY created_at LIMIT $2`,
      [ageMs, limit],
    );
    return rows.map(fromRow);
  }

  /** Binds each still-PENDING, unfenced record to the event the ledger named (commit's guard, batched). */
  async commitToEvents(records: readonly AppendedRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    const { rowCount } = await this.db.query(
      `UPDATE sealed_records r SET state = 'COMMITTED', event_id = w.event_id, committed_at = now()
         FROM ${KEYS_FROM(', event_id text')}
        WHERE ${KEY_JOIN} AND r.state = 'PENDING' AND NOT ${FENCED}`,
      [JSON.stringify(records.map((r) => toRow(r, r.eventId)))],
    );
    return rowCount;
  }

  /** Notes that the ledger referenced none of `records` when the recovery pass asked (still-PENDING rows only). */
  async markChecked(records: readonly PendingRecordKey[]): Promise<void> {
    if (records.length === 0) return;
    await this.db.query(`UPDATE sealed_records r SET ledger_checked_at = now() FROM ${KEYS_FROM()} WHERE ${KEY_JOIN} AND r.state = 'PENDING'`, [
      JSON.stringify(records.map((r) => toRow(r))),
    ]);
  }

  /**
   * Deletes those of `candidates` that are still PENDING and expired and that no event references — or that are
   * fenced (a deleted incarnation: its records go whatever the ledger says). Rows a commit holds are skipped.
   */
  async deleteUnreferenced(candidates: readonly PendingRecordKey[], referencedRecordIds: readonly string[]): Promise<number> {
    if (candidates.length === 0) return 0;
    const { rowCount } = await this.db.query(
      `WITH doomed AS (
         SELECT r.tenant, r.app_name, r.user_id, r.session_id, r.incarnation, r.record_id
           FROM sealed_records r, ${KEYS_FROM()}
          WHERE ${KEY_JOIN} AND r.state = 'PENDING' AND r.expires_at < now()
            AND (r.record_id <> ALL ($2::text[]) OR ${FENCED})
          FOR UPDATE OF r SKIP LOCKED)
       DELETE FROM sealed_records r USING doomed d
        WHERE (r.tenant, r.app_name, r.user_id, r.session_id, r.incarnation, r.record_id)
            = (d.tenant, d.app_name, d.user_id, d.session_id, d.incarnation, d.record_id)
          AND r.state = 'PENDING'`,
      [JSON.stringify(candidates.map((c) => toRow(c))), referencedRecordIds],
    );
    return rowCount;
  }
}
