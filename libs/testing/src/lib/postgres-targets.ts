import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@apphost/persistence';
import { TEST_DATABASE_URL } from './environment';

export interface PostgresTarget {
  name: 'postgres' | 'embedded-postgres';
  /** Valid inside tests (after the target's beforeAll ran). */
  url: string;
}

/**
 * Runs the same suite on the real PostgreSQL server and on the embedded one the all-in-one plane uses, so
 * the plane can never drift from production semantics (transactions, row locks, migrations).
 */
export function describeOnPostgres(title: string, suite: (target: PostgresTarget) => void): void {
  describe.each<PostgresTarget['name']>(['postgres', 'embedded-postgres'])(`${title} [%s]`, (name) => {
    const target: PostgresTarget = { name, url: name === 'postgres' ? TEST_DATABASE_URL : '' };
    let embedded: EmbeddedPostgres | undefined;
    let dir: string | undefined;

    if (name === 'embedded-postgres') {
      beforeAll(async () => {
        // Searchable by the postgres user, which runs the embedded server when the suite runs as root.
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-embedded-pg-'));
        fs.chmodSync(dir, 0o755);
        embedded = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
        target.url = embedded.url;
      }, 120_000);

      afterAll(async () => {
        await embedded?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
      });
    }

    suite(target);
  });
}
