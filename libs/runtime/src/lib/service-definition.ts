import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import type { z } from 'zod';
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
export interface ServiceContext<C extends object = object> {
  service: ServiceName;
  /** The common settings and the service's own, parsed once at startup (`ServiceDefinition.config`). */
  config: CommonConfig & C;
  transport: BusTransport;
  logger: Logger;
  metrics: ServiceMetrics;
}

/** How the all-in-one plane and a standalone pod host the same service. */
export interface ServiceDefinition<C extends object = object> {
  name: ServiceName;
  /** Stores that must be configured in a standalone deployment. */
  requires: ('postgres' | 'redis')[];
  /** Default port of the HTTP listener (ops endpoints; the gateway's API). */
  defaultHttpPort?: number;
  /**
   * The service's own settings, read from the environment by their variable names; parsed with the common ones
   * into `context.config` before anything opens. A bad value stops startup (exit 2), naming the variable.
   */
  config?: z.ZodType<C>;
  /** Services this one forwards requests to (the gateway): it is ready only while each answers `describe`. */
  routesTo?: readonly ServiceName[];
  /** Opens the service's stores; called once at startup, before the Nest application is built. */
  openStores?(context: ServiceContext<C>): Promise<StoreHandle[]>;
  /** Domain modules of the service; may do async setup that must finish before the service serves. */
  imports?(context: ServiceContext<C>, stores: StoreHandle[]): Array<Type | DynamicModule> | Promise<Array<Type | DynamicModule>>;
  /** HTTP-level setup, for services with their own routes (the gateway). */
  configureHttp?(app: INestApplication, context: ServiceContext<C>): void;
}

/** Declares a service; the config schema's output types its `context.config`. */
export function defineService<C extends object>(definition: ServiceDefinition<C>): ServiceDefinition<C> {
  return definition;
}

/** The store of the given class among those `openStores` returned: a wiring mistake stops startup, naming the service. */
// `{ prototype: T; name: string }` rather than a constructor type: store classes open through factories (private constructors).
export function storeOf<T extends StoreHandle>(stores: StoreHandle[], type: { prototype: T; name: string }, service: ServiceName): T {
  const store = stores.find((s): s is T => Object.prototype.isPrototypeOf.call(type.prototype, s));
  if (!store) throw new Error(`${service}: its ${type.name} is not open`);
  return store;
}
