import { Inject, Injectable, Optional } from '@nestjs/common';
import type { StoreReport } from '@apphost/contracts';
import type { RoutedServicesProbe, RoutedServiceStatus } from './routed-services';
import { ROUTED_SERVICES, SERVICE_CONTEXT, SERVICE_STORES } from './runtime.tokens';
import type { ServiceContext, StoreHandle } from './service-definition';

export interface Readiness {
  ready: boolean;
  bus: boolean;
  stores: StoreReport[];
  /** Only for a service that routes to others (`ServiceDefinition.routesTo`): each one's answer. */
  services?: RoutedServiceStatus[];
}

/**
 * Ready means: the bus is connected, every store answers, and every service this one routes to answers `describe`.
 * A store that cannot report is not ready.
 */
@Injectable()
export class ReadinessService {
  constructor(
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
    @Inject(SERVICE_STORES) private readonly stores: StoreHandle[],
    @Optional() @Inject(ROUTED_SERVICES) private readonly routed?: RoutedServicesProbe,
  ) {}

  async storeReports(): Promise<StoreReport[]> {
    return Promise.all(this.stores.map((s) => s.report().catch((): StoreReport => ({ kind: 'postgres', name: 'unknown', ready: false }))));
  }

  async check(): Promise<Readiness> {
    const bus = this.context.transport.isConnected();
    const [stores, services] = await Promise.all([this.storeReports(), this.routed?.check()]);
    const ready = bus && stores.every((s) => s.ready) && (services ?? []).every((s) => s.ready);
    return { ready, bus, stores, ...(services ? { services } : {}) };
  }
}
