import { Inject, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { HOST_PAGE, HostPage, type HostPageOptions } from './host-page';
import { HostPageController } from './host-page.controller';

/** Starts the sandbox listener once the gateway's server exists, and stops it with the gateway. */
class HostPageLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(HOST_PAGE) private readonly page: HostPage,
    @Inject(HttpAdapterHost) private readonly adapter: HttpAdapterHost,
  ) {}

  onApplicationBootstrap(): Promise<void> {
    return this.page.start(this.adapter.httpAdapter.getHttpServer());
  }

  onApplicationShutdown(): Promise<void> {
    return this.page.stop();
  }
}

/** The reference web host at `/host/` and its sandbox proxy on the second origin. */
@Module({})
export class HostModule {
  static register(options: HostPageOptions): DynamicModule {
    return {
      module: HostModule,
      controllers: [HostPageController],
      providers: [{ provide: HOST_PAGE, useValue: new HostPage(options) }, HostPageLifecycle],
    };
  }
}
