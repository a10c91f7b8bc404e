import type { SessionKey } from '@apphost/contracts';
import type { Database } from '@apphost/persistence';

const KEY = `tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`;

/** Which array of the event body carries the call id: its function responses or its function calls. */
export type CallSide = 'response' | 'call';

const COLUMN: Record<CallSide, string> = { response: `body->'functionResponses'`, call: `body->'functionCalls'` };

/**
 * Finds the first event of one incarnation naming a call id in its function responses or calls. The containment
 * test matches the GIN indexes of `LifecycleCallLookup1764590000001`; the session key and event-id order use the
 * primary key.
 */
export class CallEventLookupRepository {
  constructor(private readonly db: Database) {}

  async first(
    key: SessionKey,
    incarnation: number,
    side: CallSide,
    callId: string,
    afterEventId: number,
    invocationId: string | null,
  ): Promise<{ id: number; body: Record<string, unknown> } | null> {
    const { rows } = await this.db.query<{ event_id: string; body: Record<string, unknown> }>(
      `SELECT event_id, body FROM session_events
        WHERE ${KEY} AND incarnation = $5 AND event_id > $6 AND ${COLUMN[side]} @> $7::jsonb
          AND ($8::text IS NULL OR body->>'invocationId' = $8::text)
        ORDER BY event_id LIMIT 1`,
      [key.tenant, key.appName, key.userId, key.sessionId, incarnation, afterEventId, JSON.stringify([{ id: callId }]), invocationId],
    );
    const row = rows[0];
    return row ? { id: Number(row.event_id), body: row.body } : null;
  }
}
