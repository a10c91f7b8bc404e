module.exports = { ...require('../../jest.preset.cjs'), displayName: 'binding-registry', rootDir: __dirname };
