import { systemClock, type Clock } from '@apphost/mcp';
import { defineService, storeOf } from '@apphost/runtime';
import { registryConfig } from './registry.config';
import { RegistryModule } from './registry.module';
import { RegistryStore } from './store/registry-store';

/** What a host may hand the registry besides its configuration. */
export interface BindingRegistryOptions {
  /** Idle eviction, maximum lifetimes and multi-round flow deadlines run on it; `systemClock` unless given. */
  clock?: Clock;
}

/**
 * binding-registry as a deployable unit: profiles, toolset specs, binding generations, the key ring and the
 * connection-generation directory in its own PostgreSQL schema `binding_registry`; the live MCP connections in
 * this process (see README.md). Tests build one with their own clock; every host uses `bindingRegistryService`.
 */
export function createBindingRegistryService(options: BindingRegistryOptions = {}) {
  const clock = options.clock ?? systemClock;
  return defineService({
    name: 'binding-registry',
    requires: ['postgres'],
    config: registryConfig,
    openStores: async (context) => [await RegistryStore.open(context)],
    imports: (context, stores) => [RegistryModule.register(storeOf(stores, RegistryStore, context.service), context.config, context.config.INSTANCE_ID, clock)],
  });
}

export const bindingRegistryService = createBindingRegistryService();
