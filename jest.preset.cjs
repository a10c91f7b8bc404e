// Shared Jest settings for every project: TypeScript through ts-jest (transpile only; `npm run typecheck`
// does the type checking once for the whole tree), path aliases from tsconfig.base.json, and a reporter that
// fails the run on any skipped, todo or focused-away test.
const path = require('node:path');
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.base.json');

/** Published packages that ship only ES modules (the MCP Apps schemas the View RPC validates against). */
const ESM_ONLY_PACKAGES = ['@modelcontextprotocol/ext-apps'];

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.spec.json') }],
    // ESM-only packages: Node 20 `require`s them natively, but Jest's own loader only does so from Node 24.9,
    // so under Jest they are compiled to CommonJS (`ESM_ONLY_PACKAGES` is the one place to add another).
    [`/node_modules/(${ESM_ONLY_PACKAGES.join('|')})/.+\\.js$`]: ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.spec-esm.json') }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY_PACKAGES.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: __dirname + '/' }),
  testMatch: ['**/*.spec.ts'],
  testTimeout: 30000,
  reporters: ['default', path.join(__dirname, 'tools/test/no-skipped-tests.reporter.cjs')],
};
