export * from './lib/environment';
export * from './lib/pg-cleanup';
export * from './lib/processes';
export * from './lib/service-harness';
export * from './lib/service-conformance';
export * from './lib/postgres-targets';
export * from './fixtures';
export * from './lib/widgets';
