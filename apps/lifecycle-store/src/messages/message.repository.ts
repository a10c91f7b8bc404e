import type { MessageState, PendingMessage, SessionKey } from '@apphost/contracts';
import type { Database } from '@apphost/persistence';

/** `tenant, app_name, user_id, session_id` bound to $1..$4 in every statement below. */
const KEY = `tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`;
const keyParams = (k: SessionKey): unknown[] => [k.tenant, k.appName, k.userId, k.sessionId];

/**
 * The session's lifecycle record, share-locked while it is `ACTIVE` (a deletion's CAS to DELETING waits for the
 * statement, and the statement sees that CAS if it came first): every write below happens only inside it.
 */
const ACTIVE = `active AS (SELECT incarnation FROM lifecycle_records WHERE ${KEY} AND state = 'ACTIVE' FOR SHARE)`;
/** The same, only in the incarnation bound to $6. */
const ACTIVE_IN = `active AS (SELECT incarnation FROM lifecycle_records WHERE ${KEY} AND state = 'ACTIVE' AND incarnation = $6 FOR SHARE)`;

/** What the message is now (expiry applied); `$5` is always the retention in ms. */
const NOW_STATE = `pending_message_state(state, accept_by, accepted_at, claim_expires_at, $5::float8)`;

const COLUMNS = `message_id, incarnation, ${NOW_STATE} AS now_state, role, content, view_id, widget_id, nonce, toolset_id, binding_revision,
  binding_generation, principal_tenant, principal_subject, rejection, claim_expires_at, invocation_id, record_digest, claim_digest, created_at, updated_at`;

/** The View of the `pending_messages` row in hand has been ended (its teardown's tombstone, see `endView`). */
const VIEW_ENDED = `EXISTS (SELECT 1 FROM ended_view_messages e
  WHERE e.tenant = $1 AND e.app_name = $2 AND e.user_id = $3 AND e.session_id = $4 AND e.view_id = pending_messages.view_id)`;

/** The rejection the ended View's tombstone gives its messages (the row in hand is of an ended View). */
const ENDED_REJECTION = `SELECT e.rejection FROM ended_view_messages e
  WHERE e.tenant = $1 AND e.app_name = $2 AND e.user_id = $3 AND e.session_id = $4 AND e.view_id = pending_messages.view_id`;

/** The channel every replica LISTENs on for message changes; the payload names the schema and the session. */
export const MESSAGE_CHANNEL = 'apphost_pending_messages';
const NOTIFY = `pg_notify('${MESSAGE_CHANNEL}', json_build_array(current_schema(), $1::text, $2::text, $3::text, $4::text)::text)`;

export interface MessageRow {
  message_id: string;
  incarnation: string | number;
  now_state: MessageState;
  role: 'user';
  content: PendingMessage['content'];
  view_id: string;
  widget_id: string;
  nonce: string;
  toolset_id: string;
  binding_revision: string;
  binding_generation: number;
  principal_tenant: string;
  principal_subject: string;
  rejection: PendingMessage['rejection'];
  claim_expires_at: Date | string | null;
  invocation_id: string | null;
  record_digest: string;
  claim_digest: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/**
 * The first message an invocation consumed in an incarnation, for a statement that binds the session key to $1..$4
 * and the retention to $5; `incarnation` and `invocationId` are SQL (a placeholder, or an outer column).
 */
export const consumedMessageSql = (incarnation: string, invocationId: string): string =>
  `SELECT ${COLUMNS} FROM pending_messages WHERE ${KEY} AND incarnation = ${incarnation} AND invocation_id = ${invocationId} AND state = 'CONSUMED' ORDER BY seq LIMIT 1`;

/** A row of `consumedMessageSql` as the message it is (null: none); the row may come as JSON (`to_jsonb`). */
export const consumedMessageOf = (session: SessionKey, row: MessageRow | null | undefined): PendingMessage | null =>
  row ? toStored(session, row).message : null;

/** A message as stored, with what only the store compares (the record and claim digests). */
export interface StoredMessage {
  message: PendingMessage;
  recordDigest: string;
  claimDigest: string | null;
}

function toStored(session: SessionKey, row: MessageRow): StoredMessage {
  const state = row.now_state;
  return {
    message: {
      messageId: row.message_id,
      session,
      incarnation: Number(row.incarnation),
      state,
      role: row.role,
      content: row.content,
      viewId: row.view_id,
      widgetId: row.widget_id,
      nonce: row.nonce,
      toolsetId: row.toolset_id,
      bindingRevision: row.binding_revision,
      bindingGeneration: row.binding_generation,
      principal: { tenant: row.principal_tenant, subject: row.principal_subject },
      rejection: row.rejection,
      // A lapsed claim is no claim: it reads ACCEPTED, with no expiry.
      claimExpiresAt: (state === 'CLAIMED' || state === 'CONSUMED') && row.claim_expires_at ? new Date(row.claim_expires_at).toISOString() : null,
      invocationId: row.invocation_id,
      createdAt: new Date(row.created_at).toISOString(),
      updatedAt: new Date(row.updated_at).toISOString(),
    },
    recordDigest: row.record_digest,
    claimDigest: row.claim_digest,
  };
}

export type NewMessage = Omit<PendingMessage, 'state' | 'rejection' | 'claimExpiresAt' | 'invocationId' | 'createdAt' | 'updatedAt'>;

/**
 * All SQL of pending messages. Every transition is ONE conditional statement inside the session's `ACTIVE`
 * incarnation (share-locked, see `ACTIVE`), guarded by what the message is now; no row means it did not apply and
 * the caller reads the message to say why. Each transition notifies `MESSAGE_CHANNEL` (delivered at commit).
 */
export class MessageRepository {
  constructor(
    private readonly db: Database,
    /** How long a terminal message is kept (`pending_message_state` reads an older one as expired). */
    readonly retentionMs: number,
  ) {}

  /** Inserts `RECORDED` in `ACTIVE(incarnation)`; null when the session is not that, or the id already exists. */
  async record(message: NewMessage, recordDigest: string, acceptWithinMs: number): Promise<StoredMessage | null> {
    const { rows } = await this.db.query<MessageRow>(
      `WITH ${ACTIVE_IN}, m AS (
         INSERT INTO pending_messages (tenant, app_name, user_id, session_id, incarnation, message_id, state, role, content, view_id, widget_id, nonce,
                                       toolset_id, binding_revision, binding_generation, principal_tenant, principal_subject, record_digest, accept_by)
         SELECT $1, $2, $3, $4, $6, $7, 'RECORDED', 'user', $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                now() + make_interval(secs => $18::float8 / 1000)
          WHERE EXISTS (SELECT 1 FROM active)
         ON CONFLICT DO NOTHING
         RETURNING *
       )
       SELECT ${COLUMNS} FROM m`,
      [
        ...keyParams(message.session),
        this.retentionMs,
        message.incarnation,
        message.messageId,
        JSON.stringify(message.content),
        message.viewId,
        message.widgetId,
        message.nonce,
        message.toolsetId,
        message.bindingRevision,
        message.bindingGeneration,
        message.principal.tenant,
        message.principal.subject,
        recordDigest,
        acceptWithinMs,
      ],
    );
    return rows[0] ? toStored(message.session, rows[0]) : null;
  }

  /** The message of any incarnation of the session (null when absent). */
  async one(session: SessionKey, messageId: string): Promise<StoredMessage | null> {
    const { rows } = await this.db.query<MessageRow>(`SELECT ${COLUMNS} FROM pending_messages WHERE ${KEY} AND message_id = $6`, [
      ...keyParams(session),
      this.retentionMs,
      messageId,
    ]);
    return rows[0] ? toStored(session, rows[0]) : null;
  }

  /**
   * `RECORDED` (not overdue) → `ACCEPTED`, unless the View was ended: the tombstone is read by this statement, so an
   * accept either commits before `endView` does or finds its tombstone (READ COMMITTED re-checks a row `endView`
   * rejected meanwhile against its new state).
   */
  accept(session: SessionKey, messageId: string): Promise<StoredMessage | null> {
    return this.transition(session, messageId, `state = 'ACCEPTED', accepted_at = now()`, `${NOW_STATE} = 'RECORDED' AND NOT ${VIEW_ENDED}`, []);
  }

  /** `RECORDED` (not overdue) of an ended View → `REJECTED` with its tombstone's rejection: an accept that found it. */
  rejectOfEndedView(session: SessionKey, messageId: string): Promise<StoredMessage | null> {
    return this.transition(session, messageId, `state = 'REJECTED', rejection = (${ENDED_REJECTION})`, `${NOW_STATE} = 'RECORDED' AND ${VIEW_ENDED}`, []);
  }

  /**
   * The teardown fence, one statement in any session state: the View's tombstone (idempotent) and its `RECORDED`
   * messages (not overdue) `REJECTED(rejection)`. Returns how many it rejected; notifies when that is not 0.
   */
  async endView(session: SessionKey, viewId: string, rejection: string): Promise<number> {
    const { rows } = await this.db.query<{ rejected: string }>(
      `WITH tomb AS (
         INSERT INTO ended_view_messages (tenant, app_name, user_id, session_id, view_id, rejection) VALUES ($1, $2, $3, $4, $6, $7)
         ON CONFLICT DO NOTHING
       ), r AS (
         UPDATE pending_messages SET state = 'REJECTED', rejection = $7, updated_at = now()
          WHERE ${KEY} AND view_id = $6 AND ${NOW_STATE} = 'RECORDED'
          RETURNING 1
       )
       SELECT (SELECT count(*) FROM r) AS rejected, (SELECT ${NOTIFY} FROM r LIMIT 1) AS notified`,
      [...keyParams(session), this.retentionMs, viewId, rejection],
    );
    return Number(rows[0]?.rejected ?? 0);
  }

  /** Anything but `CONSUMED` or `REJECTED` → `REJECTED(rejection)`; the claim, if any, is void with it. */
  reject(session: SessionKey, messageId: string, rejection: string): Promise<StoredMessage | null> {
    return this.transition(session, messageId, `state = 'REJECTED', rejection = $7`, `state NOT IN ('CONSUMED', 'REJECTED')`, [rejection]);
  }

  /** `ACCEPTED` now (a lapsed claim included) → `CLAIMED` by the holder of the token whose digest this is. */
  claim(session: SessionKey, messageId: string, claimDigest: string, ttlMs: number): Promise<StoredMessage | null> {
    return this.transition(
      session,
      messageId,
      `state = 'CLAIMED', claim_digest = $7, claim_expires_at = now() + make_interval(secs => $8::float8 / 1000)`,
      `${NOW_STATE} = 'ACCEPTED'`,
      [claimDigest, ttlMs],
    );
  }

  /** `CLAIMED` under this live claim → `CONSUMED` by `invocationId`. */
  consume(session: SessionKey, messageId: string, claimDigest: string, invocationId: string): Promise<StoredMessage | null> {
    return this.transition(session, messageId, `state = 'CONSUMED', invocation_id = $8`, `${NOW_STATE} = 'CLAIMED' AND claim_digest = $7`, [
      claimDigest,
      invocationId,
    ]);
  }

  /**
   * The session's messages of `incarnation`, `RECORDED` ones never, optionally of one state now. In creation order,
   * the live ones (`ACCEPTED`, `CLAIMED`) first: without a state, a page is never filled by old terminal rows while a
   * newer message waits behind them.
   */
  async list(session: SessionKey, incarnation: number, state: MessageState | null, limit: number): Promise<PendingMessage[]> {
    const { rows } = await this.db.query<MessageRow>(
      `SELECT * FROM (SELECT ${COLUMNS}, seq FROM pending_messages WHERE ${KEY} AND incarnation = $6) AS m
        WHERE now_state <> 'RECORDED' AND ($7::text IS NULL OR now_state = $7::text)
        ORDER BY now_state NOT IN ('ACCEPTED', 'CLAIMED'), seq LIMIT $8`,
      [...keyParams(session), this.retentionMs, incarnation, state, limit],
    );
    return rows.map((r) => toStored(session, r).message);
  }

  /** The first message `invocationId` consumed in `incarnation` (null when none). */
  async consumedBy(session: SessionKey, incarnation: number, invocationId: string): Promise<PendingMessage | null> {
    const { rows } = await this.db.query<MessageRow>(consumedMessageSql('$6', '$7'), [...keyParams(session), this.retentionMs, incarnation, invocationId]);
    return consumedMessageOf(session, rows[0]);
  }

  private async transition(session: SessionKey, messageId: string, set: string, guard: string, extra: unknown[]): Promise<StoredMessage | null> {
    const { rows } = await this.db.query<MessageRow>(
      `WITH ${ACTIVE}, m AS (
         UPDATE pending_messages SET ${set}, updated_at = now()
          WHERE ${KEY} AND message_id = $6 AND incarnation = (SELECT incarnation FROM active) AND ${guard}
          RETURNING *
       )
       SELECT ${COLUMNS}, ${NOTIFY} FROM m`,
      [...keyParams(session), this.retentionMs, messageId, ...extra],
    );
    return rows[0] ? toStored(session, rows[0]) : null;
  }
}
