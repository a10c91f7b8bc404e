import type { SessionKey } from '@apphost/contracts';
import type { Database } from '@apphost/persistence';

const KEY = `tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`;

/** Which array of the event body carries the call id: its function responses or its function calls. */
export type CallSide = 'response' | 'call';

const COLUMN: Record<CallSide, string> = { response: `body->'functionResponses'`, call: `body->'functionCalls'` };

/**
 * The first event of an incarnation after an event id whose `side` names a call id, for a statement that binds the
 * session key to $1..$4; the rest are SQL (placeholders, or an outer column). A null `invocationId` matches any.
 */
export const firstCallEventSql = (side: CallSide, at: { incarnation: string; afterEventId: string; callIds: string; invocationId: string }): string =>
  `SELECT event_id, body FROM session_events
    WHERE ${KEY} AND incarnation = ${at.incarnation} AND event_id > ${at.afterEventId} AND ${COLUMN[side]} @> ${at.callIds}::jsonb
      AND (${at.invocationId}::text IS NULL OR body->>'invocationId' = ${at.invocationId}::text)
    ORDER BY event_id LIMIT 1`;

/** The containment pattern `firstCallEventSql` matches a call id with. */
export const callIdsPattern = (callId: string): string => JSON.stringify([{ id: callId }]);

/** A row of `firstCallEventSql` (null: none); the row may come as JSON (`to_jsonb`). */
export const callEventOf = (
  row: { event_id: string | number; body: Record<string, unknown> } | null | undefined,
): { id: number; body: Record<string, unknown> } | null => (row ? { id: Number(row.event_id), body: row.body } : null);

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
      firstCallEventSql(side, { incarnation: '$5', afterEventId: '$6', callIds: '$7', invocationId: '$8' }),
      [key.tenant, key.appName, key.userId, key.sessionId, incarnation, afterEventId, callIdsPattern(callId), invocationId],
    );
    return callEventOf(rows[0]);
  }
}
