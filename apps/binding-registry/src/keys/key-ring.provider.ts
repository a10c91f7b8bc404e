import type { OnApplicationShutdown, Provider } from '@nestjs/common';
import { ChannelListener } from '@apphost/persistence';
import { SERVICE_CONTEXT, type ServiceContext } from '@apphost/runtime';
import { KEY_RING_CHANNEL } from '../store/keys.repository';
import { RegistryStoreAccess } from '../store/store-access';
import { REGISTRY_CONFIG } from '../registry.tokens';
import type { RegistryConfig } from '../registry.config';
import { KeyRing } from './key-ring';

/** Closes the ring's LISTEN connection when the service stops. */
class ListeningKeyRing extends KeyRing implements OnApplicationShutdown {
  constructor(
    args: ConstructorParameters<typeof KeyRing>,
    private readonly channel: ChannelListener,
  ) {
    super(...args);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.channel.close();
  }
}

/**
 * The key ring, loaded (or created) before the registry serves: an unreadable ring stops startup. It listens for
 * rotations on every replica (`KEY_RING_CHANNEL`, payload the schema), so it reuses its loaded ring until one lands.
 */
export const keyRingProvider: Provider = {
  provide: KeyRing,
  inject: [RegistryStoreAccess, REGISTRY_CONFIG, SERVICE_CONTEXT],
  useFactory: async (store: RegistryStoreAccess, config: RegistryConfig, context: ServiceContext) => {
    const database = store.store.database;
    // The callbacks run only once the channel has started, after `ring` exists.
    const channel = new ChannelListener(
      database,
      KEY_RING_CHANNEL,
      (schema) => schema === database.schema && ring.invalidate(),
      () => ring.invalidate(),
    );
    const ring = new ListeningKeyRing([store.keys, config.hostKey, config.keyVerifyWindowMs, context.logger, channel], channel);
    await channel.start();
    try {
      await ring.init();
    } catch (error) {
      await channel.close(); // startup stops: nothing else will close it
      throw error;
    }
    return ring;
  },
};
