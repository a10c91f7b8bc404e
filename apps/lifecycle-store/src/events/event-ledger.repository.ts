import type { SessionKey } from '@apphost/contracts';
import type { Database } from '@apphost/persistence';
import type { FinalizedEvent } from './finalizer';

const KEY = `tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`;
const keyParams = (k: SessionKey): unknown[] => [k.tenant, k.appName, k.userId, k.sessionId];

export interface StoredEvent {
  id: number;
  incarnation: number;
  createdAt: Date;
  body: Record<string, unknown>;
}

/**
 * The event ledger's SQL. An append is ONE statement (so one round trip and its own transaction): it share-locks the
 * lifecycle record only while it is `ACTIVE(incarnation)` (a concurrent CAS to DELETING waits for it, and it sees
 * that CAS if it came first), advances the session row's id counter under its row lock — checking the optional
 * fencing token in the same statement — and inserts the finalized events with the ids it reserved. No row → nothing
 * was written, and the caller diagnoses why.
 */
export class EventLedgerRepository {
  constructor(private readonly db: Database) {}

  async append(key: SessionKey, incarnation: number, events: FinalizedEvent[], fencingToken: number | null): Promise<number[] | null> {
    const { rows } = await this.db.query<{ event_id: string }>(
      `WITH r AS (
         SELECT 1 FROM lifecycle_records WHERE ${KEY} AND state = 'ACTIVE' AND incarnation = $5 FOR SHARE
       ), s AS (
         UPDATE session_rows
            SET last_event_id = last_event_id + $6::bigint,
                coordination_token = CASE WHEN $7::bigint IS NULL THEN coordination_token ELSE GREATEST(coordination_token, $7::bigint) END
          WHERE ${KEY} AND incarnation = $5 AND EXISTS (SELECT 1 FROM r)
            AND ($7::bigint IS NULL OR coordination_token IS NULL OR coordination_token <= $7::bigint)
          RETURNING last_event_id
       ), e AS (
         INSERT INTO session_events (tenant, app_name, user_id, session_id, incarnation, event_id, imported, author, audience, invocation_origin, emitter, immediate_caller, body)
         SELECT $1, $2, $3, $4, $5, s.last_event_id - $6::bigint + d.ord, false, d.doc->>'author', d.doc->>'audience', d.doc->>'invocationOrigin', d.doc->>'emitter', d.doc->>'immediateCaller', d.doc
           FROM s, jsonb_array_elements($8::jsonb) WITH ORDINALITY AS d(doc, ord)
         RETURNING event_id
       )
       SELECT event_id FROM e ORDER BY event_id`,
      [...keyParams(key), incarnation, events.length, fencingToken, JSON.stringify(events)],
    );
    return rows.length === 0 ? null : rows.map((r) => Number(r.event_id));
  }

  /** The highest coordination token the session row has seen (for diagnosing a rejected append). */
  async coordinationToken(key: SessionKey): Promise<number | null> {
    const { rows } = await this.db.query<{ coordination_token: string | null }>(`SELECT coordination_token FROM session_rows WHERE ${KEY}`, keyParams(key));
    return rows[0]?.coordination_token == null ? null : Number(rows[0].coordination_token);
  }

  /**
   * Up to `limit` events after `afterId` in id order; `model` leaves out app audit events in the statement itself,
   * so LIMIT counts only what is returned and a page's last id is where the next one starts.
   */
  async page(key: SessionKey, incarnation: number, afterId: number, limit: number, audience: 'model' | 'all'): Promise<StoredEvent[]> {
    const { rows } = await this.db.query<{ event_id: string; incarnation: string; created_at: Date; body: Record<string, unknown> }>(
      `SELECT event_id, incarnation, created_at, body FROM session_events
        WHERE ${KEY} AND incarnation = $5 AND event_id > $6 AND ($8::boolean OR audience IS NULL)
        ORDER BY event_id LIMIT $7`,
      [...keyParams(key), incarnation, afterId, limit, audience === 'all'],
    );
    return rows.map((r) => ({ id: Number(r.event_id), incarnation: Number(r.incarnation), createdAt: r.created_at, body: r.body }));
  }

  /** One event of one incarnation (null when absent). */
  async one(key: SessionKey, incarnation: number, eventId: number): Promise<StoredEvent | null> {
    const { rows } = await this.db.query<{ event_id: string; incarnation: string; created_at: Date; body: Record<string, unknown> }>(
      `SELECT event_id, incarnation, created_at, body FROM session_events WHERE ${KEY} AND incarnation = $5 AND event_id = $6`,
      [...keyParams(key), incarnation, eventId],
    );
    const r = rows[0];
    return r ? { id: Number(r.event_id), incarnation: Number(r.incarnation), createdAt: r.created_at, body: r.body } : null;
  }
}
