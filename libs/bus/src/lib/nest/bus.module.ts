import { DynamicModule, Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { BusClient } from '../bus-client';
import { BusServer, type BusLogger, type BusServerOptions } from '../bus-server';
import type { BusMetrics } from '../metrics';
import type { BusTransport } from '../transports/transport';
import { BusExplorer } from './bus-explorer';
import { BUS_OPTIONS } from './bus.tokens';

export interface BusModuleOptions {
  transport: BusTransport;
  instanceId: string;
  queueGroup: string;
  defaultTimeoutMs: number;
  shutdownGraceMs: number;
  logger: BusLogger;
  maxPayloadBytes?: number;
  metrics?: BusMetrics;
  classifyError?: BusServerOptions['classifyError'];
  /** The service this module serves (span attribution). */
  service?: string;
}

/**
 * Request-reply for one service: provides the typed `BusClient` and serves every `@BusHandler` in the
 * application. The transport is owned by the caller (the all-in-one plane shares one between services).
 */
@Global()
@Module({})
export class BusModule {
  static forRoot(options: BusModuleOptions): DynamicModule {
    return {
      module: BusModule,
      imports: [DiscoveryModule],
      providers: [
        { provide: BUS_OPTIONS, useValue: options },
        { provide: BusClient, useFactory: () => new BusClient(options) },
        // Constructed here so a missing queue group fails while the module is being built: at startup.
        { provide: BusServer, useFactory: () => new BusServer(options) },
        BusExplorer,
      ],
      exports: [BusClient, BusServer],
    };
  }
}
