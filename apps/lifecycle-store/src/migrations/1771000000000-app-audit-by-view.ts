import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * App audit events by View: compaction (`compact-app-audit`) finds one View's records of one incarnation, newest
 * first, without reading the rest of the ledger. Partial (`audience = 'app_audit'`), so appends of model-facing
 * events pay nothing for it. The View id is `customMetadata["io.apphost/app-audit"].viewId` of the record.
 */
export class AppAuditByView1771000000000 implements MigrationInterface {
  name = 'AppAuditByView1771000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX session_events_app_audit_by_view ON session_events
        (tenant, app_name, user_id, session_id, incarnation, (body->'customMetadata'->'io.apphost/app-audit'->>'viewId'), event_id)
        WHERE audience = 'app_audit'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX session_events_app_audit_by_view`);
  }
}
