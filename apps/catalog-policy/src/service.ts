import { storeOf, type ServiceDefinition } from '@apphost/runtime';
import { parseCatalogConfig } from './catalog.config';
import { CatalogModule } from './catalog.module';
import { CatalogStore } from './store/catalog-store';

/**
 * catalog-policy as a deployable unit: model and app catalogs, batch classification, resource-read policy and
 * tool-definition pinning; approved fingerprints in its own PostgreSQL schema `catalog_policy` (see README.md).
 */
export const catalogPolicyService: ServiceDefinition = {
  name: 'catalog-policy',
  requires: ['postgres'],
  openStores: async (context) => {
    parseCatalogConfig(context.env); // bad settings stop startup before the store opens
    return [await CatalogStore.open(context)];
  },
  imports: (context, stores) => {
    const store = storeOf(stores, CatalogStore, context.service);
    return [CatalogModule.register(store, parseCatalogConfig(context.env), context.logger)];
  },
};
