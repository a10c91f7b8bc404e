export * from './lib/sealed-result.client';
