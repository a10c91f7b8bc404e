module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-web', rootDir: __dirname };
