import type { Provider } from '@nestjs/common';
import { SERVICE_CONTEXT, type ServiceContext } from '@apphost/runtime';
import { RegistryStoreAccess } from '../store/store-access';
import { REGISTRY_CONFIG } from '../registry.tokens';
import type { RegistryConfig } from '../registry.config';
import { KeyRing } from './key-ring';

/** The key ring, loaded (or created) before the registry serves: an unreadable ring stops startup. */
export const keyRingProvider: Provider = {
  provide: KeyRing,
  inject: [RegistryStoreAccess, REGISTRY_CONFIG, SERVICE_CONTEXT],
  useFactory: async (store: RegistryStoreAccess, config: RegistryConfig, context: ServiceContext) => {
    const ring = new KeyRing(store.keys, config.hostKey, config.keyVerifyWindowMs, context.logger);
    await ring.init();
    return ring;
  },
};
