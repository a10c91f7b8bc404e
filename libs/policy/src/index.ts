export * from './lib/visibility';
export * from './lib/uri';
export * from './lib/resource-policy';
export * from './lib/projection';
export * from './lib/tool-result';
export * from './lib/tool-definition';
export * from './lib/argument-admission';
