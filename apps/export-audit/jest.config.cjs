module.exports = { ...require('../../jest.preset.cjs'), displayName: 'export-audit', rootDir: __dirname };
