module.exports = { ...require('../../jest.preset.cjs'), displayName: 'lifecycle-store', rootDir: __dirname };
