import type { SealedReferenceQuery } from '@apphost/contracts';
import type { Database } from '@apphost/persistence';

/** How an event's sealed references are indexed: `<recordId>:<functionCallId>` (a record id never contains `:`). */
export const referenceToken = (q: Pick<SealedReferenceQuery, 'recordId' | 'functionCallId'>): string => `${q.recordId}:${q.functionCallId}`;

/**
 * The ledger's side of sealed-record GC: which sealed records a durable event references. One statement over the
 * GIN index `session_events_sealed_refs` (migration 1769000000000), then matched against each record's session and
 * incarnation, so a record is never claimed by an event of another session or incarnation.
 */
export class SealedReferencesRepository {
  constructor(private readonly db: Database) {}

  /** The referenced records among `queries`, each with the first event that references it. */
  async appendedAmong(queries: readonly SealedReferenceQuery[]): Promise<{ recordId: string; eventId: number }[]> {
    const wanted = queries.map((q) => ({
      tenant: q.session.tenant,
      app_name: q.session.appName,
      user_id: q.session.userId,
      session_id: q.session.sessionId,
      incarnation: q.incarnation,
      record_id: q.recordId,
      token: referenceToken(q),
    }));
    const { rows } = await this.db.query<{ record_id: string; event_id: string }>(
      `WITH hits AS MATERIALIZED (
         SELECT tenant, app_name, user_id, session_id, incarnation, event_id, session_event_sealed_refs(body) AS refs
           FROM session_events
          WHERE session_event_sealed_refs(body) && $2::text[]
       )
       SELECT DISTINCT ON (w.record_id) w.record_id, h.event_id
         FROM jsonb_to_recordset($1::jsonb) AS w (tenant text, app_name text, user_id text, session_id text, incarnation bigint, record_id text, token text)
         JOIN hits h ON h.tenant = w.tenant AND h.app_name = w.app_name AND h.user_id = w.user_id AND h.session_id = w.session_id
                    AND h.incarnation = w.incarnation AND w.token = ANY (h.refs)
        ORDER BY w.record_id, h.event_id`,
      [JSON.stringify(wanted), wanted.map((w) => w.token)],
    );
    return rows.map((r) => ({ recordId: r.record_id, eventId: Number(r.event_id) }));
  }
}
