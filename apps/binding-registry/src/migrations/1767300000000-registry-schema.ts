import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Profiles, toolsets, binding generations, the key ring, registry instances and the connection-generation directory. */
export class RegistrySchema1767300000000 implements MigrationInterface {
  name = 'RegistrySchema1767300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE profiles (
        profile_id text PRIMARY KEY,
        body jsonb NOT NULL,
        digest text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE toolsets (
        toolset_id text PRIMARY KEY,
        spec jsonb NOT NULL,
        digest text NOT NULL,
        profile_id text REFERENCES profiles (profile_id),
        current_generation integer NOT NULL DEFAULT 1 CHECK (current_generation >= 1),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE bindings (
        toolset_id text NOT NULL REFERENCES toolsets (toolset_id),
        generation integer NOT NULL CHECK (generation >= 1),
        state text NOT NULL CHECK (state IN ('UNMATERIALIZED', 'MATERIALIZING', 'PROFILE_BOUND', 'MODEL_ONLY', 'REVOKING', 'CLOSED')),
        readiness jsonb NOT NULL DEFAULT '[]',
        binding_revision text,
        constructions integer NOT NULL DEFAULT 0 CHECK (constructions <= 1),
        closes integer NOT NULL DEFAULT 0 CHECK (closes <= 1),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (toolset_id, generation),
        CHECK ((state = 'PROFILE_BOUND') = (binding_revision IS NOT NULL) OR state IN ('REVOKING', 'CLOSED'))
      )`);
    await q.query(`
      CREATE TABLE key_ring (
        key_id text PRIMARY KEY,
        state text NOT NULL CHECK (state IN ('ACTIVE', 'VERIFYING', 'RETIRED')),
        material bytea,
        wrapped boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        verify_until timestamptz,
        CHECK ((state = 'RETIRED') = (material IS NULL))
      )`);
    await q.query(`CREATE UNIQUE INDEX key_ring_one_active ON key_ring (state) WHERE state = 'ACTIVE'`);
    await q.query(`
      CREATE TABLE registry_instances (
        instance_id text PRIMARY KEY,
        incarnation uuid NOT NULL,
        state text NOT NULL CHECK (state IN ('LIVE', 'STOPPED')),
        lease_expires_at timestamptz NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE SEQUENCE generation_fence`);
    await q.query(`
      CREATE TABLE connection_generations (
        generation_id uuid PRIMARY KEY,
        generation_key text NOT NULL,
        toolset_id text NOT NULL REFERENCES toolsets (toolset_id),
        binding_generation integer NOT NULL,
        connection_class text NOT NULL CHECK (connection_class IN ('app-safe', 'full')),
        advertises_ui boolean NOT NULL,
        owner_instance text NOT NULL,
        owner_incarnation uuid NOT NULL,
        fence bigint NOT NULL,
        state text NOT NULL CHECK (state IN ('LIVE', 'CLOSED', 'GONE')),
        close_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        closed_at timestamptz
      )`);
    // The ownership claim: at most one LIVE generation per key across every replica.
    await q.query(`CREATE UNIQUE INDEX connection_generations_one_live ON connection_generations (generation_key) WHERE state = 'LIVE'`);
    await q.query(`CREATE INDEX connection_generations_owner ON connection_generations (owner_instance) WHERE state = 'LIVE'`);
    await q.query(`CREATE INDEX connection_generations_binding ON connection_generations (toolset_id, binding_generation) WHERE state = 'LIVE'`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['connection_generations', 'registry_instances', 'key_ring', 'bindings', 'toolsets', 'profiles']) await q.query(`DROP TABLE ${t}`);
    await q.query(`DROP SEQUENCE generation_fence`);
  }
}
