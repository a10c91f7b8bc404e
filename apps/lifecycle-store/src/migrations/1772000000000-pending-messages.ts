import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pending `ui/message`s, per session key, incarnation and message id. `state` is what was last written; what a
 * message IS at a given moment is `pending_message_state(...)` (expiry is applied in the queries, no timer): a
 * `RECORDED` one past `accept_by` is `EXPIRED`, an `ACCEPTED` one (or a `CLAIMED` one whose claim lapsed) older than
 * the retention is `EXPIRED`, and a `CLAIMED` one whose claim lapsed is `ACCEPTED` again. Only a digest of the claim
 * token is stored. The deletion cascade's local purge deletes a session's rows with its events.
 */
export class PendingMessages1772000000000 implements MigrationInterface {
  name = 'PendingMessages1772000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE pending_messages (
        tenant text NOT NULL, app_name text NOT NULL, user_id text NOT NULL, session_id text NOT NULL,
        incarnation bigint NOT NULL CHECK (incarnation >= 1),
        message_id text NOT NULL CHECK (message_id ~ '^msg-[0-9a-f]{32}$'),
        seq bigint GENERATED ALWAYS AS IDENTITY,
        state text NOT NULL CHECK (state IN ('RECORDED', 'ACCEPTED', 'CLAIMED', 'CONSUMED', 'EXPIRED', 'REJECTED')),
        role text NOT NULL CHECK (role = 'user'),
        content jsonb NOT NULL CHECK (jsonb_typeof(content) = 'array'),
        view_id text NOT NULL,
        widget_id text NOT NULL,
        nonce text NOT NULL,
        toolset_id text NOT NULL,
        binding_revision text NOT NULL,
        binding_generation integer NOT NULL CHECK (binding_generation >= 1),
        principal_tenant text NOT NULL,
        principal_subject text NOT NULL,
        record_digest text NOT NULL CHECK (record_digest ~ '^[0-9a-f]{64}$'),
        rejection text NULL CHECK (rejection IS NULL OR rejection IN ('VIEW_TORN_DOWN', 'SESSION_DELETED', 'PRINCIPAL_REVOKED', 'TOOLSET_REVOKED', 'TOOLSET_REBOUND')),
        accept_by timestamptz NOT NULL,
        accepted_at timestamptz NULL,
        claim_digest text NULL CHECK (claim_digest IS NULL OR claim_digest ~ '^[0-9a-f]{64}$'),
        claim_expires_at timestamptz NULL,
        invocation_id text NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant, app_name, user_id, session_id, incarnation, message_id),
        CHECK ((state = 'REJECTED') = (rejection IS NOT NULL)),
        CHECK (state NOT IN ('ACCEPTED', 'CLAIMED', 'CONSUMED') OR accepted_at IS NOT NULL),
        CHECK (state NOT IN ('CLAIMED', 'CONSUMED') OR (claim_digest IS NOT NULL AND claim_expires_at IS NOT NULL)),
        CHECK ((state = 'CONSUMED') = (invocation_id IS NOT NULL))
      )`);
    // Listing a session's messages by state in creation order; finding the message an invocation consumed.
    await q.query(`CREATE INDEX pending_messages_by_state ON pending_messages (tenant, app_name, user_id, session_id, incarnation, state, seq)`);
    await q.query(
      `CREATE INDEX pending_messages_by_invocation ON pending_messages (tenant, app_name, user_id, session_id, incarnation, invocation_id) WHERE invocation_id IS NOT NULL`,
    );
    await q.query(`
      CREATE FUNCTION pending_message_state(state text, accept_by timestamptz, accepted_at timestamptz, claim_expires_at timestamptz, retention_ms float8)
        RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT CASE
          WHEN state = 'RECORDED' AND accept_by <= now() THEN 'EXPIRED'
          WHEN state = 'CLAIMED' AND claim_expires_at > now() THEN 'CLAIMED'
          WHEN state IN ('ACCEPTED', 'CLAIMED') AND accepted_at <= now() - make_interval(secs => retention_ms / 1000) THEN 'EXPIRED'
          WHEN state = 'CLAIMED' THEN 'ACCEPTED'
          ELSE state
        END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION pending_message_state(text, timestamptz, timestamptz, timestamptz, float8)`);
    await q.query(`DROP TABLE pending_messages`);
  }
}
