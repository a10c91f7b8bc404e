import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { BusServer } from '@apphost/bus';
import { describeContract, type DescribeResponse } from '@apphost/contracts';
import { ReadinessService } from './readiness';
import { SERVICE_CONTEXT } from './runtime.tokens';
import type { ServiceContext } from './service-definition';
import { APPHOST_VERSION } from './version';

/** Every service answers `apphost.<service>.describe.v1` the same way: identity, version, instance, stores. */
@Injectable()
export class DescribeRegistrar implements OnModuleInit {
  private readonly startedAt = new Date().toISOString();

  constructor(
    private readonly server: BusServer,
    private readonly readiness: ReadinessService,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  onModuleInit(): void {
    this.server.register(describeContract(this.context.service), () => this.describe());
  }

  async describe(): Promise<DescribeResponse> {
    return {
      service: this.context.service,
      version: APPHOST_VERSION,
      instanceId: this.context.config.INSTANCE_ID,
      transport: this.context.transport.kind,
      startedAt: this.startedAt,
      stores: await this.readiness.storeReports(),
    };
  }
}
