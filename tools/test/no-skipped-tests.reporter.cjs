// A skipped, todo or focused-away test is a defect here, never progress: fail the run that contains one, or a
// test file that registered no test. Leave a per-project tally ({ root, passed, failed, skipped, emptyFiles },
// root relative to the workspace) that tools/test/run.cjs checks (every project passed > 0) and sums into the
// closing "N passed, N failed" line.
const fs = require('node:fs');
const path = require('node:path');

const WORKSPACE = path.resolve(__dirname, '..', '..');

class NoSkippedTestsReporter {
  constructor(globalConfig) {
    this.globalConfig = globalConfig;
    this.error = undefined;
  }

  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    if (skipped > 0) {
      const names = [];
      for (const file of results.testResults) {
        for (const t of file.testResults) {
          if (t.status === 'pending' || t.status === 'todo' || t.status === 'skipped')
            names.push(`${path.relative(process.cwd(), file.testFilePath)}: ${t.fullName}`);
        }
      }
      this.error = new Error(`${skipped} skipped/todo test(s) are not allowed:\n  ${names.join('\n  ')}`);
      console.error(this.error.message);
    }
    const emptyFiles = results.testResults.filter((file) => file.testResults.length === 0).map((file) => path.relative(WORKSPACE, file.testFilePath));
    if (emptyFiles.length > 0) {
      const message = `${emptyFiles.length} test file(s) registered no test (or failed to load):\n  ${emptyFiles.join('\n  ')}`;
      this.error = new Error(this.error ? `${this.error.message}\n${message}` : message);
      console.error(message);
    }
    const dir = process.env.APPHOST_TEST_TALLY_DIR;
    if (dir) {
      fs.mkdirSync(dir, { recursive: true });
      const root = path.relative(WORKSPACE, this.globalConfig.rootDir) || '.';
      const tally = { root, passed: results.numPassedTests, failed: results.numFailedTests + results.numRuntimeErrorTestSuites, skipped, emptyFiles };
      fs.writeFileSync(path.join(dir, `${process.pid}-${Date.now()}.json`), JSON.stringify(tally));
    }
  }

  getLastError() {
    return this.error;
  }
}

module.exports = NoSkippedTestsReporter;
