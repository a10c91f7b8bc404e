import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The teardown fence of pending `ui/message`s: one tombstone per ended View (per session key), with the rejection
 * its messages get. `end-view-messages`
 * inserts it and rejects the View's `RECORDED` messages in one statement; the accept guards on its absence, so no
 * message of an ended View is accepted after the fence committed. The deletion cascade's local purge deletes a
 * session's tombstones with its messages.
 */
export class EndedViewMessages1773000000000 implements MigrationInterface {
  name = 'EndedViewMessages1773000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ended_view_messages (
        tenant text NOT NULL, app_name text NOT NULL, user_id text NOT NULL, session_id text NOT NULL,
        view_id text NOT NULL,
        rejection text NOT NULL CHECK (rejection IN ('VIEW_TORN_DOWN', 'SESSION_DELETED', 'PRINCIPAL_REVOKED', 'TOOLSET_REVOKED', 'TOOLSET_REBOUND')),
        ended_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant, app_name, user_id, session_id, view_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ended_view_messages`);
  }
}
