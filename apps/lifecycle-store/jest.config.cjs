// One worker: this project's suites run one at a time. Bus isolation no longer needs it (every test file has its
// own bus namespace, TEST_BUS_PREFIX from @apphost/testing).
module.exports = { ...require('../../jest.preset.cjs'), displayName: 'lifecycle-store', rootDir: __dirname, maxWorkers: 1 };
