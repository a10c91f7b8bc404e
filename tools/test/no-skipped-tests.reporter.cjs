// A skipped, todo or focused-away test is a defect here, never progress: fail the run that contains one,
// and leave a per-project tally that tools/test/run.cjs sums into the closing "N passed, N failed" line.
const fs = require('node:fs');
const path = require('node:path');

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
          if (t.status === 'pending' || t.status === 'todo' || t.status === 'skipped') names.push(`${path.relative(process.cwd(), file.testFilePath)}: ${t.fullName}`);
        }
      }
      this.error = new Error(`${skipped} skipped/todo test(s) are not allowed:\n  ${names.join('\n  ')}`);
      console.error(this.error.message);
    }
    const dir = process.env.APPHOST_TEST_TALLY_DIR;
    if (dir) {
      fs.mkdirSync(dir, { recursive: true });
      const tally = { passed: results.numPassedTests, failed: results.numFailedTests + results.numRuntimeErrorTestSuites, skipped };
      fs.writeFileSync(path.join(dir, `${process.pid}-${Date.now()}.json`), JSON.stringify(tally));
    }
  }

  getLastError() {
    return this.error;
  }
}

module.exports = NoSkippedTestsReporter;
