// Runs TypeScript sources directly (npm start, benchmarks): SWC transpiles with decorator metadata and
// resolves the tsconfig path aliases, so no build step stands between a fresh clone and a running plane.
process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || require('node:path').join(__dirname, '..', 'tsconfig.json');
require('@swc-node/register');
