// Shared Jest settings for every project: TypeScript through ts-jest (transpile only; `npm run typecheck`
// does the type checking once for the whole tree), path aliases from tsconfig.base.json, and a reporter that
// fails the run on any skipped, todo or focused-away test.
const path = require('node:path');
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.base.json');

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.spec.json') }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: __dirname + '/' }),
  testMatch: ['**/*.spec.ts'],
  testTimeout: 30000,
  reporters: ['default', path.join(__dirname, 'tools/test/no-skipped-tests.reporter.cjs')],
};
