import { defineService, storeOf } from '@apphost/runtime';
import { sealedConfig } from './sealed/sealed.config';
import { SealedModule } from './sealed/sealed.module';
import { SealedStore } from './sealed/sealed-store';

/**
 * sealed-result-store as a deployable unit: confidential sealed envelopes in its own PostgreSQL schema
 * `sealed_result_store` (see README.md for the state machine, recovery and limits).
 */
export const sealedResultStoreService = defineService({
  name: 'sealed-result-store',
  requires: ['postgres'],
  config: sealedConfig,
  openStores: async (context) => [await SealedStore.open(context)],
  imports: (context, stores) => [SealedModule.register(storeOf(stores, SealedStore, context.service), context.config)],
});
