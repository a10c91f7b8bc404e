module.exports = { ...require('../../jest.preset.cjs'), displayName: 'sealed-results', rootDir: __dirname };
