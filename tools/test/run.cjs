#!/usr/bin/env node
// `npm test`: type-check the tree, lint every project, run every project's tests, then print one plain
// closing line ("tests: N passed, N failed, N skipped"). Exits non-zero if any step failed.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const tallyDir = path.join(root, 'tmp', 'test-tally');
fs.rmSync(tallyDir, { recursive: true, force: true });
const env = { ...process.env, APPHOST_TEST_TALLY_DIR: tallyDir, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' };
const nx = path.join(root, 'node_modules', '.bin', 'nx');
const extra = process.argv.slice(2);

const steps = [
  ['typecheck', path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json', '--noEmit']],
  ['lint', nx, ['run-many', '-t', 'lint', '--parallel=2', '--outputStyle=stream']],
  ['test', nx, ['run-many', '-t', 'test', '--parallel=1', '--outputStyle=stream', '--skip-nx-cache', ...extra]],
];

let failedSteps = [];
for (const [name, cmd, args] of steps) {
  console.log(`\n=== ${name}: ${path.basename(cmd)} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, env, stdio: 'inherit' });
  if (r.status !== 0) failedSteps.push(name);
}

let passed = 0, failed = 0, skipped = 0;
if (fs.existsSync(tallyDir)) {
  for (const f of fs.readdirSync(tallyDir)) {
    const t = JSON.parse(fs.readFileSync(path.join(tallyDir, f), 'utf8'));
    passed += t.passed; failed += t.failed; skipped += t.skipped;
  }
}
if (failedSteps.length) console.log(`\nfailed steps: ${failedSteps.join(', ')}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedSteps.length || failed ? 1 : 0);
