import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '@apphost/testing';
import type { FaultOutcome } from './invariants';

const DIR = path.join(REPO_ROOT, 'tmp', 'faults-table');
const TABLE = path.join(REPO_ROOT, 'tmp', 'faults-table.md');

/**
 * Each suite writes its rows to tmp/faults-table/<suite>.json; the table (tmp/faults-table.md) is rebuilt from all of
 * them, so suites running in parallel workers never write the same file.
 */
export function writeFaultRows(suite: string, rows: FaultOutcome[]): void {
  fs.mkdirSync(DIR, { recursive: true });
  fs.writeFileSync(path.join(DIR, `${suite}.json`), JSON.stringify(rows, null, 2));
  const all = fs
    .readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .flatMap((f) => JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')) as FaultOutcome[]);
  const lines = [
    '| fault | code seen | recovered | lost |',
    '| --- | --- | --- | --- |',
    ...all.map(
      (r) =>
        `| ${r.fault} | ${r.codes.join(', ') || '-'} | ${r.recoveredMs === null ? 'no' : `yes (${(r.recoveredMs / 1000).toFixed(1)} s)`} | ${r.lost.length ? r.lost.join('; ').replace(/\|/g, '/') : 'nothing'} |`,
    ),
  ];
  fs.writeFileSync(TABLE, `${lines.join('\n')}\n`);
}
