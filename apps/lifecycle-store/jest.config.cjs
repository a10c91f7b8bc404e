// One worker: every suite boots a lifecycle-store serving the same NATS subjects in the `lifecycle-store` queue
// group, so two suites running at once would answer each other's requests from different schemas.
module.exports = { ...require('../../jest.preset.cjs'), displayName: 'lifecycle-store', rootDir: __dirname, maxWorkers: 1 };
