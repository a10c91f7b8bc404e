import { Inject, Injectable } from '@nestjs/common';
import type { StoreReport } from '@apphost/contracts';
import { SERVICE_CONTEXT, SERVICE_STORES } from './runtime.tokens';
import type { ServiceContext, StoreHandle } from './service-definition';

export interface Readiness {
  ready: boolean;
  bus: boolean;
  stores: StoreReport[];
}

/** Ready means: the bus is connected and every store answers. A store that cannot report is not ready. */
@Injectable()
export class ReadinessService {
  constructor(
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
    @Inject(SERVICE_STORES) private readonly stores: StoreHandle[],
  ) {}

  async storeReports(): Promise<StoreReport[]> {
    return Promise.all(this.stores.map((s) => s.report().catch((): StoreReport => ({ kind: 'postgres', name: 'unknown', ready: false }))));
  }

  async check(): Promise<Readiness> {
    const bus = this.context.transport.isConnected();
    const stores = await this.storeReports();
    return { ready: bus && stores.every((s) => s.ready), bus, stores };
  }
}
