import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { BusServer } from '../bus-server';
import { BUS_HANDLER_METADATA, type BusHandlerMetadata } from './bus-handler.decorator';
import { BUS_OPTIONS } from './bus.tokens';

/** Finds every `@BusHandler` method, subscribes it, and drains the server when the application shuts down. */
@Injectable()
export class BusExplorer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly server: BusServer,
    // The part of BusModuleOptions the explorer reads, typed here so bus.module (which provides it) is not imported back.
    @Inject(BUS_OPTIONS) private readonly options: { shutdownGraceMs: number },
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || wrapper.isDependencyTreeStatic() === false) continue;
      const prototype = Object.getPrototypeOf(instance);
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[name];
        if (typeof method !== 'function') continue;
        const meta = Reflect.getMetadata(BUS_HANDLER_METADATA, method) as BusHandlerMetadata | undefined;
        if (meta) this.server.register(meta.contract, method.bind(instance), meta.routing);
      }
    }
    this.server.start();
    await this.server.ready();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.server.stop(this.options.shutdownGraceMs);
  }
}
