import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GIN indexes for `find-call-event`: an event's function responses and function calls by call id (containment,
 * `jsonb_path_ops`), so a retried batch and a confirmation decision find their event without scanning the ledger.
 */
export class LifecycleCallLookup1764590000001 implements MigrationInterface {
  name = 'LifecycleCallLookup1764590000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX session_events_function_responses ON session_events USING gin ((body->'functionResponses') jsonb_path_ops)`);
    await q.query(`CREATE INDEX session_events_function_calls ON session_events USING gin ((body->'functionCalls') jsonb_path_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX session_events_function_calls`);
    await q.query(`DROP INDEX session_events_function_responses`);
  }
}
