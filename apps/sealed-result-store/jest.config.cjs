module.exports = { ...require('../../jest.preset.cjs'), displayName: 'sealed-result-store', rootDir: __dirname };
