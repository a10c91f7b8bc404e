import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Clock } from '@apphost/mcp';
import { SERVICE_CONTEXT, type ServiceContext } from '@apphost/runtime';
import { RegistryStoreAccess } from '../store/store-access';
import { REGISTRY_CLOCK, REGISTRY_CONFIG, REGISTRY_INSTANCE, type RegistryInstance } from '../registry.tokens';
import type { RegistryConfig } from '../registry.config';
import { RegistryMetrics } from '../registry.metrics';
import { InstanceLease } from './instance-lease';
import { LocalGenerations } from './local-generations';

/** The generations this instance owns, tied to its ownership lease; shutdown closes them and ends the lease. */
@Injectable()
export class OwnedGenerations implements OnModuleInit, OnApplicationShutdown {
  readonly local: LocalGenerations;
  readonly lease: InstanceLease;

  constructor(
    store: RegistryStoreAccess,
    @Inject(REGISTRY_INSTANCE) instance: RegistryInstance,
    @Inject(REGISTRY_CONFIG) config: RegistryConfig,
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
    @Inject(REGISTRY_CLOCK) clock: Clock,
    metrics: RegistryMetrics,
  ) {
    const cap = { max: config.maxLiveGenerations, metrics };
    this.local = new LocalGenerations(store.generations, context.logger, () => this.lease.valid(), cap, clock);
    this.lease = new InstanceLease(store.generations, instance.instanceId, instance.incarnation, config.instanceLeaseMs, context.logger, (reason) =>
      this.local.endAll('GONE', reason),
    );
  }

  onModuleInit(): Promise<void> {
    return this.lease.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.local.endAll('CLOSED', 'OWNER_STOPPED');
    await this.lease.stop();
  }
}
