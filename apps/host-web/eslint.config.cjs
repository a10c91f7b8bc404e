module.exports = [...require('../../eslint.config.cjs')];
