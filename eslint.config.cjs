// Lint for every project. The module-boundary matrix is the architecture in DESIGN.md made enforceable:
// contracts depend on nothing internal, libs only on contracts and lower libs, apps never on other apps,
// and a service's scope only reaches shared code.
const nx = require('@nx/eslint-plugin');
const jest = require('eslint-plugin-jest');

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
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
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
