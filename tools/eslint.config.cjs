const workspace = require('../eslint.config.cjs');

// The plane composes every app through its service definition (`@apphost/app-<name>`, tsconfig.base.json):
// the tools project, and only it, may import those aliases. Apps importing apps stay refused by the root rule.
const [severity, boundaries] = workspace.find((c) => c.rules?.['@nx/enforce-module-boundaries']).rules['@nx/enforce-module-boundaries'];

module.exports = [
  ...workspace,
  { files: ['**/*.ts'], rules: { '@nx/enforce-module-boundaries': [severity, { ...boundaries, allow: [...boundaries.allow, '@apphost/app-*'] }] } },
  // Test-only files of the tools project: the benchmarks, the plane's and the browser suite's test harnesses and the fault suite.
  {
    files: ['bench/**/*.ts', 'plane/*-harness.ts', 'plane/plane-process.ts', 'browser/*-harness.ts', 'faults/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
];
