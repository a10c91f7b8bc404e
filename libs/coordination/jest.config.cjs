module.exports = { ...require('../../jest.preset.cjs'), displayName: 'coordination', rootDir: __dirname };
