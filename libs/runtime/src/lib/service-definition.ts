import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import type { BusTransport } from '@apphost/bus';
import type { ServiceName, StoreReport } from '@apphost/contracts';
import type { CommonConfig } from './config';
import type { Logger } from './logger';
import type { ServiceMetrics } from './metrics';

/** A store a service holds open: it reports readiness and identity, and closes on shutdown. */
export interface StoreHandle {
  report(): Promise<StoreReport>;
  close(): Promise<void>;
}

/** Everything a service gets from the process that hosts it (its own pod, or the all-in-one plane). */
export interface ServiceContext {
  service: ServiceName;
  config: CommonConfig;
  /** The raw environment, for service-specific settings parsed once in `configure`. */
  env: Record<string, string | undefined>;
  transport: BusTransport;
  logger: Logger;
  metrics: ServiceMetrics;
}

/** How the all-in-one plane and a standalone pod host the same service. */
export interface ServiceDefinition {
  name: ServiceName;
  /** Stores that must be configured in a standalone deployment. */
  requires: ('postgres' | 'redis')[];
  /** Default port of the HTTP listener (ops endpoints; the gateway's API). */
  defaultHttpPort?: number;
  /** Opens the service's stores; called once at startup, before the Nest application is built. */
  openStores?(context: ServiceContext): Promise<StoreHandle[]>;
  /** Domain modules of the service; may do async setup that must finish before the service serves. */
  imports?(context: ServiceContext, stores: StoreHandle[]): Array<Type | DynamicModule> | Promise<Array<Type | DynamicModule>>;
  /** HTTP-level setup, for services with their own routes (the gateway). */
  configureHttp?(app: INestApplication, context: ServiceContext): void;
}

/** The store of the given class among those `openStores` returned: a wiring mistake stops startup, naming the service. */
// `{ prototype: T; name: string }` rather than a constructor type: store classes open through factories (private constructors).
export function storeOf<T extends StoreHandle>(stores: StoreHandle[], type: { prototype: T; name: string }, service: ServiceName): T {
  const store = stores.find((s): s is T => Object.prototype.isPrototypeOf.call(type.prototype, s));
  if (!store) throw new Error(`${service}: its ${type.name} is not open`);
  return store;
}
