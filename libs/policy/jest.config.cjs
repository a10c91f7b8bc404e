module.exports = { ...require('../../jest.preset.cjs'), displayName: 'policy', rootDir: __dirname };
