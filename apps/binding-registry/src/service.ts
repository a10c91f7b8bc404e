import { storeOf, type ServiceDefinition } from '@apphost/runtime';
import { parseRegistryConfig } from './registry.config';
import { RegistryModule } from './registry.module';
import { RegistryStore } from './store/registry-store';

/**
 * binding-registry as a deployable unit: profiles, toolset specs, binding generations, the key ring and the
 * connection-generation directory in its own PostgreSQL schema `binding_registry`; the live MCP connections in
 * this process (see README.md).
 */
export const bindingRegistryService: ServiceDefinition = {
  name: 'binding-registry',
  requires: ['postgres'],
  openStores: async (context) => {
    parseRegistryConfig(context.env); // bad settings stop startup before the store opens
    return [await RegistryStore.open(context)];
  },
  imports: (context, stores) => {
    const store = storeOf(stores, RegistryStore, context.service);
    return [RegistryModule.register(store, parseRegistryConfig(context.env), context.config.INSTANCE_ID)];
  },
};
