module.exports = [...require('../eslint.config.cjs'), { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } }];
