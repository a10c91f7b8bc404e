export * from './lib/coordination-store';
export * from './lib/memory-coordination-store';
export * from './lib/redis-coordination-store';
export * from './lib/create-coordination-store';
