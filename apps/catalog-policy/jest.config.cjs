module.exports = { ...require('../../jest.preset.cjs'), displayName: 'catalog-policy', rootDir: __dirname };
