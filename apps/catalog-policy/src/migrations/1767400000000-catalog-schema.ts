import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tool-definition pins (one per toolset, connection class and tool) and their append-only event log. */
export class CatalogSchema1767400000000 implements MigrationInterface {
  name = 'CatalogSchema1767400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tool_pins (
        toolset_id text NOT NULL,
        connection_class text NOT NULL CHECK (connection_class IN ('app-safe', 'full')),
        tool_name text NOT NULL,
        state text NOT NULL CHECK (state IN ('APPROVED', 'QUARANTINED')),
        approved_fingerprint text NOT NULL,
        candidate_fingerprint text,
        candidate_declaration jsonb,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (toolset_id, connection_class, tool_name),
        CHECK ((state = 'QUARANTINED') = (candidate_fingerprint IS NOT NULL))
      )`);
    await q.query(`
      CREATE TABLE tool_pin_events (
        id bigserial PRIMARY KEY,
        toolset_id text NOT NULL,
        connection_class text NOT NULL,
        tool_name text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('FIRST_SIGHT', 'DRIFT', 'APPROVED')),
        previous_fingerprint text,
        fingerprint text NOT NULL,
        actor text,
        at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE tool_pin_events`);
    await q.query(`DROP TABLE tool_pins`);
  }
}
