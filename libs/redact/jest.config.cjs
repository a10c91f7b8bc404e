module.exports = { ...require('../../jest.preset.cjs'), displayName: 'redact', rootDir: __dirname };
