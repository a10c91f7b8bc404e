// Suites that boot this service on the shared NATS must not overlap: replicas of one service share its queue
// group, so two suites' instances (each on its own schema) would answer each other's requests.
module.exports = { ...require('../../jest.preset.cjs'), displayName: 'sealed-result-store', rootDir: __dirname, maxWorkers: 1 };
