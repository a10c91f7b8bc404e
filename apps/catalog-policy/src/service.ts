import { defineService, storeOf } from '@apphost/runtime';
import { catalogConfig } from './catalog.config';
import { CatalogModule } from './catalog.module';
import { CatalogStore } from './store/catalog-store';

/**
 * catalog-policy as a deployable unit: model and app catalogs, batch classification, resource-read policy and
 * tool-definition pinning; approved fingerprints in its own PostgreSQL schema `catalog_policy` (see README.md).
 */
export const catalogPolicyService = defineService({
  name: 'catalog-policy',
  requires: ['postgres'],
  config: catalogConfig,
  openStores: async (context) => [await CatalogStore.open(context)],
  imports: (context, stores) => [CatalogModule.register(storeOf(stores, CatalogStore, context.service), context.config, context.logger)],
});
