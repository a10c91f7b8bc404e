import { defineService, storeOf } from '@apphost/runtime';
import { registryConfig } from './registry.config';
import { RegistryModule } from './registry.module';
import { RegistryStore } from './store/registry-store';

/**
 * binding-registry as a deployable unit: profiles, toolset specs, binding generations, the key ring and the
 * connection-generation directory in its own PostgreSQL schema `binding_registry`; the live MCP connections in
 * this process (see README.md).
 */
export const bindingRegistryService = defineService({
  name: 'binding-registry',
  requires: ['postgres'],
  config: registryConfig,
  openStores: async (context) => [await RegistryStore.open(context)],
  imports: (context, stores) => [RegistryModule.register(storeOf(stores, RegistryStore, context.service), context.config, context.config.INSTANCE_ID)],
});
