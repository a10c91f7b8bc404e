import { Client } from 'pg';
import { TEST_DATABASE_URL, uniquePrefix } from './environment';
import { dropSchemasWithPrefix } from './pg-cleanup';
import { eventually } from './async';
import { spawnTs, waitForExit } from './processes';

describe('test helpers', () => {
  it('makes prefixes that are valid, distinct schema-name prefixes', () => {
    const a = uniquePrefix();
    expect(a).toMatch(/^t_[0-9a-f]{10}_$/);
    expect(uniquePrefix()).not.toBe(a);
  });

  it('drops exactly the schemas under a test prefix, and refuses any other prefix', async () => {
    const prefix = uniquePrefix();
    const other = uniquePrefix();
    const client = new Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA "${prefix}one"; CREATE SCHEMA "${prefix}two"; CREATE SCHEMA "${other}keep"`);
      await expect(dropSchemasWithPrefix('public')).rejects.toThrow(/non-test prefix/);
      await dropSchemasWithPrefix(prefix);
      const { rows } = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1 OR nspname LIKE $2', [
        `${prefix}%`,
        `${other}%`,
      ]);
      expect(rows.map((r) => r.nspname)).toEqual([`${other}keep`]);
    } finally {
      await dropSchemasWithPrefix(other);
      await client.end();
    }
  });

  it('eventually returns the first defined value, or fails with the last error', async () => {
    let calls = 0;
    await expect(eventually(async () => (++calls >= 3 ? calls : undefined), 2000, 10)).resolves.toBe(3);
    await expect(eventually(async () => Promise.reject(new Error('still down')), 100, 10)).rejects.toThrow(/still down/);
  });

  it('runs a TypeScript entry point as its own process and reports its exit and output', async () => {
    const child = spawnTs('libs/testing/src/test/exit-with.ts', { EXIT_CODE: '3' });
    const result = await waitForExit(child, 30_000);
    expect(result).toMatchObject({ code: 3, stdout: 'hello from a child\n' });
  });
});
