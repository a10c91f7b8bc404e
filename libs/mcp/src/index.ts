export * from './lib/constants';
export * from './lib/target';
export * from './lib/capabilities';
export * from './lib/errors';
export * from './lib/pagination';
export * from './lib/mrtr';
export * from './lib/connection';
export * from './lib/generation-client';
