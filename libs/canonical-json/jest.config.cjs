module.exports = { ...require('../../jest.preset.cjs'), displayName: 'canonical-json', rootDir: __dirname };
