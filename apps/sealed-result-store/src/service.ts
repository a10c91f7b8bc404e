import { storeOf, type ServiceDefinition } from '@apphost/runtime';
import { parseSealedConfig } from './sealed/sealed.config';
import { SealedModule } from './sealed/sealed.module';
import { SealedStore } from './sealed/sealed-store';

/**
 * sealed-result-store as a deployable unit: confidential sealed envelopes in its own PostgreSQL schema
 * `sealed_result_store` (see README.md for the state machine, recovery and limits).
 */
export const sealedResultStoreService: ServiceDefinition = {
  name: 'sealed-result-store',
  requires: ['postgres'],
  openStores: async (context) => {
    parseSealedConfig(context.env); // bad settings stop startup before the store opens
    return [await SealedStore.open(context)];
  },
  imports: (context, stores) => {
    const store = storeOf(stores, SealedStore, context.service);
    return [SealedModule.register(store, parseSealedConfig(context.env))];
  },
};
