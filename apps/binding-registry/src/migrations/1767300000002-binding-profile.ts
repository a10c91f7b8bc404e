import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The profile each binding generation binds under. A rebind may move a toolset to another profile (how a policy is
 * narrowed), so the profile belongs to the generation: `toolsets.profile_id` is the current generation's, and every
 * older generation keeps the one it was materialized with. Existing rows take their toolset's profile.
 */
export class BindingProfile1767300000002 implements MigrationInterface {
  name = 'BindingProfile1767300000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE bindings ADD COLUMN profile_id text REFERENCES profiles (profile_id)`);
    await q.query(`UPDATE bindings b SET profile_id = t.profile_id FROM toolsets t WHERE b.toolset_id = t.toolset_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE bindings DROP COLUMN profile_id`);
  }
}
