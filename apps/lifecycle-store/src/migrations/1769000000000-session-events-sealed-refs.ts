import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Lets the ledger answer "which of these sealed records does a durable event reference?" (sealed-store GC and its
 * recovery pass ask it) without scanning event bodies: `session_event_sealed_refs(body)` lists an event's references
 * as `<recordId>:<functionCallId>` — widget descriptors' `sealedResultRef` and the event-level `sealedResultRefs` —
 * and a GIN index over it serves `&&`. Existing rows are indexed by the CREATE INDEX; appends are unchanged.
 */
export class SessionEventsSealedRefs1769000000000 implements MigrationInterface {
  name = 'SessionEventsSealedRefs1769000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION session_event_sealed_refs(body jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT coalesce(array_agg(ref), '{}'::text[]) FROM (
          SELECT (w->'sealedResultRef'->>'recordId') || ':' || (w->'correlation'->>'functionCallId') AS ref
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(body->'widgets') = 'array' THEN body->'widgets' ELSE '[]'::jsonb END) AS w
           WHERE jsonb_typeof(w->'sealedResultRef') = 'object'
          UNION ALL
          SELECT (r.value->>'recordId') || ':' || r.key
            FROM jsonb_each(CASE WHEN jsonb_typeof(body->'sealedResultRefs') = 'object' THEN body->'sealedResultRefs' ELSE '{}'::jsonb END) AS r
        ) AS refs $$`);
    await q.query(`CREATE INDEX session_events_sealed_refs ON session_events USING gin (session_event_sealed_refs(body))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX session_events_sealed_refs`);
    await q.query(`DROP FUNCTION session_event_sealed_refs(jsonb)`);
  }
}
