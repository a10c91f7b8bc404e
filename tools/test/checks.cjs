// The checks that keep `npm test` from passing while tests did not run (tools/test/run.cjs calls them; pure
// functions, tested by checks.spec.ts): every project has a test target, every project that ran passed at least
// one test, no test file registered zero tests, and no spec file registers its tests conditionally.
const fs = require('node:fs');
const path = require('node:path');

/** Functions that register tests or suites (their `.each`, `.only`, `.skip`, `.concurrent` forms included). */
const REGISTRARS = new Set(['describe', 'it', 'test', 'fdescribe', 'fit', 'xdescribe', 'xit', 'xtest', 'describeOnPostgres']);

/** Projects (from the project graph's nodes) that have no `test` target. */
function projectsWithoutTestTarget(nodes) {
  return Object.values(nodes)
    .filter((node) => !node.data.targets || !node.data.targets.test)
    .map((node) => node.name)
    .sort();
}

/** The projects a run selects: all with a test target, or those named by `--projects=a,b` / `-p a,b`. */
function selectedProjects(nodes, args) {
  const withTests = Object.values(nodes).filter((node) => node.data.targets && node.data.targets.test);
  const named = [];
  args.forEach((arg, i) => {
    if (arg.startsWith('--projects=')) named.push(...arg.slice('--projects='.length).split(','));
    else if ((arg === '--projects' || arg === '-p') && args[i + 1]) named.push(...args[i + 1].split(','));
  });
  if (named.length === 0) return withTests;
  return withTests.filter((node) => named.includes(node.name));
}

/**
 * Projects of `expected` ({ name, root }) that reported no tally or passed no test. `tallies` are the reporter's
 * files: { root, passed, failed, skipped, emptyFiles }.
 */
function projectsWithoutPassedTests(expected, tallies) {
  const passedByRoot = new Map();
  for (const tally of tallies) passedByRoot.set(tally.root, (passedByRoot.get(tally.root) || 0) + tally.passed);
  return expected
    .filter((project) => !(passedByRoot.get(project.root) > 0))
    .map((project) => `${project.name}: ${passedByRoot.has(project.root) ? '0 tests passed' : 'no test run reported'}`)
    .sort();
}

/** Test files that registered no test at all, from every tally. */
function emptyTestFiles(tallies) {
  return tallies.flatMap((tally) => tally.emptyFiles || []).sort();
}

/** `it.each(...)` → `it`; `describe.skip` → `describe`; anything else → undefined. */
function rootIdentifier(ts, node) {
  let current = node;
  for (;;) {
    if (ts.isIdentifier(current)) return current.text;
    if (ts.isPropertyAccessExpression(current) || ts.isElementAccessExpression(current)) current = current.expression;
    else if (ts.isCallExpression(current)) current = current.expression;
    else if (ts.isParenthesizedExpression(current)) current = current.expression;
    else return undefined;
  }
}

/** The conditional construct that decides whether `node` runs, if one encloses it (its branches, not its test). */
function enclosingCondition(ts, node) {
  for (let child = node, parent = node.parent; parent; child = parent, parent = parent.parent) {
    if (ts.isIfStatement(parent) && child !== parent.expression) return 'if';
    if (ts.isConditionalExpression(parent) && child !== parent.condition) return 'ternary';
    if (ts.isBinaryExpression(parent) && child === parent.right) {
      const op = parent.operatorToken.kind;
      if (op === ts.SyntaxKind.AmpersandAmpersandToken || op === ts.SyntaxKind.BarBarToken || op === ts.SyntaxKind.QuestionQuestionToken)
        return 'short-circuit';
    }
    if (ts.isCaseClause(parent) || ts.isDefaultClause(parent)) return 'switch';
    if (ts.isCatchClause(parent)) return 'catch';
  }
  return undefined;
}

/**
 * Places in one spec file where tests are registered conditionally: a registration call inside an `if`, a
 * ternary, a short-circuit or a switch; a registrar chosen by a condition (`(ok ? describe : describe.skip)`,
 * `const maybe = ok ? it : it.skip`); or the table of a `.each` filled conditionally (`if (x) cases.push(...)`).
 * Conditions inside a test's body (assertions) are fine. Returns "file:line: what" strings.
 */
function conditionalRegistrations(file, source) {
  const ts = require('typescript');
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found = [];
  const at = (node, what) => found.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: ${what}`);
  const tables = new Set();
  const pushes = [];
  const visit = (node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = rootIdentifier(ts, callee);
      const direct = ts.isIdentifier(callee) || ts.isPropertyAccessExpression(callee) || ts.isCallExpression(callee);
      if (name && REGISTRARS.has(name) && direct) {
        // `it.each(table)(...)` is one registration: judge the outer call only.
        const inner = ts.isCallExpression(node.parent) && node.parent.expression === node;
        const condition = !inner && enclosingCondition(ts, node);
        if (condition) at(node, `${name}(...) registered under a${condition === 'if' ? 'n' : ''} ${condition}`);
        // `describe.each(table)(...)`: remember the table, to check how it is filled.
        if (ts.isCallExpression(callee) && ts.isPropertyAccessExpression(callee.expression) && callee.expression.name.text === 'each') {
          const [table] = callee.arguments;
          if (table && ts.isIdentifier(table)) tables.add(table.text);
        }
      }
      if (ts.isPropertyAccessExpression(callee) && ['push', 'unshift', 'splice'].includes(callee.name.text) && ts.isIdentifier(callee.expression)) {
        pushes.push({ node, table: callee.expression.text });
      }
    }
    if (ts.isConditionalExpression(node)) {
      const chosen = [node.whenTrue, node.whenFalse]
        .filter((b) => !ts.isCallExpression(b))
        .map((b) => rootIdentifier(ts, b))
        .find((n) => n && REGISTRARS.has(n));
      if (chosen) at(node, `${chosen} chosen by a condition`);
    }
    if (
      ts.isBinaryExpression(node) &&
      [ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken].includes(node.operatorToken.kind)
    ) {
      const name = rootIdentifier(ts, node.right);
      if (name && REGISTRARS.has(name) && !ts.isCallExpression(node.right)) at(node, `${name} chosen by a condition`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  for (const { node, table } of pushes) {
    const condition = tables.has(table) && enclosingCondition(ts, node);
    if (condition) at(node, `the table of ${table}.each is filled under a${condition === 'if' ? 'n' : ''} ${condition}`);
  }
  return found.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/** Every `*.spec.ts` under `dirs` (node_modules, tmp and dist skipped). */
function specFiles(dirs) {
  const skip = new Set(['node_modules', 'tmp', 'dist', '.nx', '.apphost']);
  const walk = (dir) =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      if (skip.has(entry.name)) return [];
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return walk(full);
      return entry.name.endsWith('.spec.ts') ? [full] : [];
    });
  return dirs
    .filter((d) => fs.existsSync(d))
    .flatMap(walk)
    .sort();
}

/** conditionalRegistrations over every spec file under `root`'s apps, libs and tools; paths relative to `root`. */
function conditionalRegistrationsInTree(root) {
  return specFiles(['apps', 'libs', 'tools'].map((d) => path.join(root, d))).flatMap((file) =>
    conditionalRegistrations(path.relative(root, file), fs.readFileSync(file, 'utf8')),
  );
}

module.exports = {
  conditionalRegistrations,
  conditionalRegistrationsInTree,
  emptyTestFiles,
  projectsWithoutPassedTests,
  projectsWithoutTestTarget,
  selectedProjects,
  specFiles,
};
