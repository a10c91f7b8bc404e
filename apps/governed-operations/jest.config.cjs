module.exports = { ...require('../../jest.preset.cjs'), displayName: 'governed-operations', rootDir: __dirname };
