import { Client } from 'pg';
import { TEST_DATABASE_URL } from './environment';

/** Drops every schema a test created under its prefix. */
export async function dropSchemasWithPrefix(prefix: string, url = TEST_DATABASE_URL): Promise<void> {
  if (!/^t_[0-9a-f]+_$/.test(prefix)) throw new Error(`refusing to drop schemas for a non-test prefix "${prefix}"`);
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)', [prefix]);
    for (const { nspname } of rows) await client.query(`DROP SCHEMA "${nspname}" CASCADE`);
  } finally {
    await client.end();
  }
}
