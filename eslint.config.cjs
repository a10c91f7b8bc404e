// Lint for every project. The module-boundary matrix is the layering of docs/architecture.md made enforceable:
// contracts depend on nothing internal, libs only on contracts and lower libs, apps never on other apps,
// and a service's scope only reaches shared code.
const nx = require('@nx/eslint-plugin');
const jest = require('eslint-plugin-jest');

const TESTING_ONLY = '@apphost/testing is for spec, test-support and bench files only (*.spec.ts, *.bench.ts, src/test/, src/testing/).';
/** Files that may use @apphost/testing; a project's own eslint.config.cjs may add its test-only files. */
const TEST_SUPPORT_FILES = ['**/*.spec.ts', '**/*.bench.ts', '**/src/test/**/*.ts', '**/src/testing/**/*.ts'];

module.exports = [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  { ignores: ['**/dist', '**/node_modules', '**/tmp', '**/.nx', '**/.apphost'] },
  {
    files: ['**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          banTransitiveDependencies: true,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:contracts', 'type:lib'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:contracts', 'type:lib'] },
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:contracts', 'type:lib'] },
            { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:testing', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:plane', onlyDependOnLibsWithTags: ['scope:shared', 'scope:testing'] },
            { sourceTag: 'scope:gateway', onlyDependOnLibsWithTags: ['scope:shared', 'scope:testing'] },
            { sourceTag: 'scope:binding-registry', onlyDependOnLibsWithTags: ['scope:shared', 'scope:testing'] },
            { sourceTag: 'scope:catalog-policy', onlyDependOnLibsWithTags: ['scope:shared', 'scope:testing'] },
            { sourceTag: 'scope:sealed-result-store', onlyDependOnLibsWithTags: ['scope:shared', 'scope:testing'] },
            { sourceTag: 'scope:lifecycle-store', onlyDependOnLibsWithTags: ['scope:shared', 'scope:testing'] },
            { sourceTag: 'scope:governed-operations', onlyDependOnLibsWithTags: ['scope:shared', 'scope:testing'] },
            { sourceTag: 'scope:export-audit', onlyDependOnLibsWithTags: ['scope:shared', 'scope:testing'] },
            // The browser page bundles only npm packages: no workspace lib runs in the browser.
            { sourceTag: 'scope:host-web', onlyDependOnLibsWithTags: [] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // The test kit (fixtures, fake providers, harnesses) never ships: shipped code must not reach it.
    files: ['**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@apphost/testing', message: TESTING_ONLY }], patterns: [{ group: ['@apphost/testing/*'], message: TESTING_ONLY }] },
      ],
    },
  },
  {
    // Where the test kit is allowed: specs, benchmarks and test-support folders (src/test, src/testing).
    files: TEST_SUPPORT_FILES,
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['**/*.spec.ts'],
    plugins: { jest },
    rules: {
      'jest/no-focused-tests': 'error',
      'jest/no-disabled-tests': 'error',
      'jest/expect-expect': ['error', { assertFunctionNames: ['expect', 'expect*'] }],
    },
  },
];
