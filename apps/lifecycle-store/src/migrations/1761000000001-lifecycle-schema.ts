import type { MigrationInterface, QueryRunner } from 'typeorm';

const KEY_COLUMNS = `tenant text NOT NULL, app_name text NOT NULL, user_id text NOT NULL, session_id text NOT NULL`;
const KEY = `tenant, app_name, user_id, session_id`;

/**
 * The lifecycle-store schema (unqualified names resolve in the service's own schema through `search_path`):
 *
 * - `session_rows`: the Session backend's rows. `incarnation`/receipt columns are NULL only for a legacy row
 *   written before lifecycle records existed; such a row is adopted lazily as `ACTIVE(1)`.
 * - `session_fences`: the co-located fence row per session key; its token is the incarnation of the one creator
 *   allowed to commit a session row (`createIfFenceCurrent` updates it guarded inside the committing transaction).
 * - `lifecycle_records`: incarnation, state, version, creation reservation, adoption marker and cascade progress.
 *   A trigger rejects every illegal transition, so the database refuses one even if the service had a bug.
 * - `session_events`: the append-only ledger per (session, incarnation) with server-assigned ids.
 */
export class LifecycleSchema1761000000001 implements MigrationInterface {
  name = 'LifecycleSchema1761000000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE session_rows (
        ${KEY_COLUMNS},
        incarnation bigint NULL CHECK (incarnation IS NULL OR incarnation >= 1),
        creation_operation_id text NULL,
        import_digest text NULL,
        import_count integer NOT NULL DEFAULT 0,
        adopted_at timestamptz NULL,
        last_event_id bigint NOT NULL DEFAULT 0,
        coordination_token bigint NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (${KEY}),
        CHECK ((creation_operation_id IS NULL) = (import_digest IS NULL)),
        CHECK (creation_operation_id IS NULL OR incarnation IS NOT NULL)
      )`);
    await q.query(`
      CREATE TABLE session_fences (
        ${KEY_COLUMNS},
        fence_token bigint NOT NULL CHECK (fence_token >= 0),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (${KEY})
      )`);
    await q.query(`
      CREATE TABLE lifecycle_records (
        ${KEY_COLUMNS},
        incarnation bigint NOT NULL CHECK (incarnation >= 1),
        state text NOT NULL CHECK (state IN ('CREATING', 'ACTIVE', 'DELETING', 'DELETED')),
        version bigint NOT NULL CHECK (version >= 1),
        creation_operation_id text NULL,
        reserved_at timestamptz NULL,
        adopted boolean NOT NULL DEFAULT false,
        adoption jsonb NULL,
        cascade jsonb NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (${KEY}),
        CHECK (state <> 'CREATING' OR (creation_operation_id IS NOT NULL AND reserved_at IS NOT NULL)),
        CHECK (state NOT IN ('DELETING', 'DELETED') OR cascade IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX lifecycle_records_unfinished ON lifecycle_records (state) WHERE state IN ('CREATING', 'DELETING')`);
    await q.query(`
      CREATE FUNCTION lifecycle_guard_transition() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.tenant <> OLD.tenant OR NEW.app_name <> OLD.app_name OR NEW.user_id <> OLD.user_id OR NEW.session_id <> OLD.session_id THEN
          RAISE EXCEPTION 'lifecycle: a record never changes its key' USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.version <> OLD.version + 1 THEN
          RAISE EXCEPTION 'lifecycle: version must advance by one (% -> %)', OLD.version, NEW.version USING ERRCODE = 'check_violation';
        END IF;
        IF NOT (
             (OLD.state = 'CREATING' AND NEW.state = 'ACTIVE'   AND NEW.incarnation = OLD.incarnation)
          OR (OLD.state = 'CREATING' AND NEW.state = 'CREATING' AND NEW.incarnation > OLD.incarnation)
          OR (OLD.state = 'ACTIVE'   AND NEW.state = 'DELETING' AND NEW.incarnation = OLD.incarnation)
          OR (OLD.state = 'DELETING' AND NEW.state IN ('DELETING', 'DELETED') AND NEW.incarnation = OLD.incarnation)
          OR (OLD.state = 'DELETED'  AND NEW.state = 'CREATING' AND NEW.incarnation > OLD.incarnation)
        ) THEN
          RAISE EXCEPTION 'lifecycle: illegal transition %(%) -> %(%)', OLD.state, OLD.incarnation, NEW.state, NEW.incarnation USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(`CREATE TRIGGER lifecycle_records_transition BEFORE UPDATE ON lifecycle_records FOR EACH ROW EXECUTE FUNCTION lifecycle_guard_transition()`);
    await q.query(`
      CREATE FUNCTION lifecycle_forbid() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'lifecycle: % on % is not allowed', TG_OP, TG_TABLE_NAME USING ERRCODE = 'check_violation';
      END $$`);
    // Records are never deleted: incarnations stay monotonic across deletion and re-creation.
    await q.query(`CREATE TRIGGER lifecycle_records_no_delete BEFORE DELETE ON lifecycle_records FOR EACH ROW EXECUTE FUNCTION lifecycle_forbid()`);
    await q.query(`
      CREATE TABLE session_events (
        ${KEY_COLUMNS},
        incarnation bigint NOT NULL CHECK (incarnation >= 1),
        event_id bigint NOT NULL CHECK (event_id >= 1),
        imported boolean NOT NULL,
        author text NOT NULL,
        audience text NULL CHECK (audience IS NULL OR audience = 'app_audit'),
        invocation_origin text NOT NULL CHECK (invocation_origin IN ('user', 'mcp_app', 'system')),
        emitter text NOT NULL CHECK (emitter IN ('runner', 'host', 'system', 'session-api')),
        immediate_caller text NULL CHECK (immediate_caller IS NULL OR immediate_caller IN ('model', 'app', 'host')),
        body jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (${KEY}, incarnation, event_id)
      )`);
    // Append-only: rows are inserted, and deleted only by the deletion cascade.
    await q.query(`CREATE TRIGGER session_events_append_only BEFORE UPDATE ON session_events FOR EACH ROW EXECUTE FUNCTION lifecycle_forbid()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE session_events`);
    await q.query(`DROP TABLE lifecycle_records`);
    await q.query(`DROP TABLE session_fences`);
    await q.query(`DROP TABLE session_rows`);
    await q.query(`DROP FUNCTION lifecycle_forbid()`);
    await q.query(`DROP FUNCTION lifecycle_guard_transition()`);
  }
}

export const LIFECYCLE_MIGRATIONS = [LifecycleSchema1761000000001];
