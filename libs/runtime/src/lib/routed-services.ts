import type { BusClient } from '@apphost/bus';
import { AppHostError, describeContract, type ErrorCode, type ServiceName } from '@apphost/contracts';

/** One routed service as readiness sees it: it answered `describe` in time, or why not. */
export interface RoutedServiceStatus {
  service: ServiceName;
  ready: boolean;
  error?: { code: ErrorCode; message: string };
}

export interface RoutedServicesOptions {
  /** Per `describe`; all are asked at once, so a probe takes about this long at worst. */
  timeoutMs: number;
  /** Probes within this window share one answer, so frequent probes (or several replicas' kubelets) do not flood the bus. */
  cacheMs: number;
  now?: () => number;
}

/** Default bounds: well inside the manifests' 2 s readiness probe timeout. */
export const ROUTED_SERVICES_DEFAULTS: RoutedServicesOptions = { timeoutMs: 500, cacheMs: 1500 };

/**
 * Whether each service this one routes requests to answers (the gateway's readiness): a bounded `describe` to each,
 * cached briefly. A service that does not answer in time, or that nothing serves, is not ready, by name.
 */
export class RoutedServicesProbe {
  private last?: { at: number; answer: Promise<RoutedServiceStatus[]> };
  private readonly now: () => number;

  constructor(
    private readonly bus: BusClient,
    readonly services: readonly ServiceName[],
    private readonly options: RoutedServicesOptions = ROUTED_SERVICES_DEFAULTS,
  ) {
    this.now = options.now ?? Date.now;
  }

  check(): Promise<RoutedServiceStatus[]> {
    const at = this.now();
    if (this.last && at - this.last.at < this.options.cacheMs) return this.last.answer;
    const answer = Promise.all(this.services.map((service) => this.ask(service)));
    this.last = { at, answer };
    return answer;
  }

  private async ask(service: ServiceName): Promise<RoutedServiceStatus> {
    try {
      await this.bus.request(describeContract(service), {}, { timeoutMs: this.options.timeoutMs });
      return { service, ready: true };
    } catch (error) {
      const known = error instanceof AppHostError ? error : new AppHostError('INTERNAL', 'describe failed');
      return { service, ready: false, error: { code: known.code, message: known.message } };
    }
  }
}
