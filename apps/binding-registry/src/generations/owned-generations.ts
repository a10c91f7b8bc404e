import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Clock } from '@apphost/mcp';
import { SERVICE_CONTEXT, type ServiceContext } from '@apphost/runtime';
import { RegistryStoreAccess } from '../store/store-access';
import { REGISTRY_CLOCK, REGISTRY_CONFIG, REGISTRY_INSTANCE, type RegistryInstance } from '../registry.tokens';
import type { RegistryConfig } from '../registry.config';
import { RegistryMetrics } from '../registry.metrics';
import { GenerationEnds } from './generation-ends';
import { InstanceLease } from './instance-lease';
import { LocalGenerations } from './local-generations';

/**
 * The generations this instance owns, tied to its ownership lease. Their ends are recorded durably (retried through
 * an outage); shutdown closes them and ends the lease while the store is still open, so a successor claims at once.
 */
@Injectable()
export class OwnedGenerations implements OnModuleInit, OnApplicationShutdown {
  readonly local: LocalGenerations;
  readonly lease: InstanceLease;
  readonly ends: GenerationEnds;

  constructor(
    store: RegistryStoreAccess,
    @Inject(REGISTRY_INSTANCE) instance: RegistryInstance,
    @Inject(REGISTRY_CONFIG) config: RegistryConfig,
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
    @Inject(REGISTRY_CLOCK) clock: Clock,
    metrics: RegistryMetrics,
  ) {
    this.ends = new GenerationEnds(store.generations, context.logger);
    // A generation claimed by an earlier incarnation is not served even after a new one re-established the lease.
    const servable = (row: { ownerIncarnation: string }) => this.lease.valid() && row.ownerIncarnation === instance.incarnation;
    const cap = { max: config.maxLiveGenerations, metrics };
    this.local = new LocalGenerations(this.ends, context.logger, servable, cap, clock);
    this.lease = new InstanceLease(store.generations, instance, config.instanceLeaseMs, context.logger, (reason) => this.local.endAll('GONE', reason));
  }

  onModuleInit(): Promise<void> {
    return this.lease.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.local.endAll('CLOSED', 'OWNER_STOPPED');
    await this.ends.retry();
    this.ends.stop();
    // Also closes every LIVE row of this incarnation that an end above could not record.
    await this.lease.stop();
  }
}
