#!/usr/bin/env node
// `npm test`: type-check the tree, lint every project, check that every project has tests and registers them
// unconditionally, run every project's tests, check that each project passed at least one and that no test file
// registered none, then print one plain closing line ("tests: N passed, N failed, N skipped"). Exits non-zero if
// any step or check failed. Arguments go to the test step (`npm test -- --projects=bus,tools` runs those two).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const checks = require('./checks.cjs');

const root = path.join(__dirname, '..', '..');
const tallyDir = path.join(root, 'tmp', 'test-tally');
fs.rmSync(tallyDir, { recursive: true, force: true });
const env = { ...process.env, APPHOST_TEST_TALLY_DIR: tallyDir, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' };
const nx = path.join(root, 'node_modules', '.bin', 'nx');
const extra = process.argv.slice(2);

let failedSteps = [];
const report = (name, problems) => {
  if (problems.length === 0) return;
  console.error(`\n${name}:\n  ${problems.join('\n  ')}`);
  failedSteps.push(name);
};

/** The project graph's nodes (name, root, targets), from `nx graph --file`. */
function projectNodes() {
  const file = path.join(root, 'tmp', 'test-graph.json');
  const r = spawnSync(nx, ['graph', `--file=${file}`], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error('nx graph failed');
  return JSON.parse(fs.readFileSync(file, 'utf8')).graph.nodes;
}

const steps = [
  ['typecheck', path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json', '--noEmit']],
  // The host page's browser sources, with the DOM library (the root project is Node's).
  ['typecheck host-web', path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'apps/host-web/tsconfig.json', '--noEmit']],
  ['format', path.join(root, 'node_modules', '.bin', 'prettier'), ['--check', '.', '--log-level', 'warn']],
  ['lint', nx, ['run-many', '-t', 'lint', '--parallel=2', '--outputStyle=stream']],
  ['test', nx, ['run-many', '-t', 'test', '--parallel=2', '--outputStyle=stream', '--skip-nx-cache', ...extra]],
];

const nodes = projectNodes();
console.log('\n=== test registration: every project has a test target; no spec file registers tests conditionally');
report('projects without a test target', checks.projectsWithoutTestTarget(nodes));
report('tests registered conditionally', checks.conditionalRegistrationsInTree(root));

for (const [name, cmd, args] of steps) {
  console.log(`\n=== ${name}: ${path.basename(cmd)} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, env, stdio: 'inherit' });
  if (r.status !== 0) failedSteps.push(name);
}

const tallies = fs.existsSync(tallyDir) ? fs.readdirSync(tallyDir).map((f) => JSON.parse(fs.readFileSync(path.join(tallyDir, f), 'utf8'))) : [];
const expected = checks.selectedProjects(nodes, extra).map((node) => ({ name: node.name, root: node.data.root }));
report('projects that passed no test', checks.projectsWithoutPassedTests(expected, tallies));
report('test files that registered no test', checks.emptyTestFiles(tallies));

let passed = 0,
  failed = 0,
  skipped = 0;
for (const t of tallies) {
  passed += t.passed;
  failed += t.failed;
  skipped += t.skipped;
}
if (failedSteps.length) console.log(`\nfailed steps: ${failedSteps.join(', ')}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedSteps.length || failed ? 1 : 0);
