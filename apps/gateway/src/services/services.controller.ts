import { Controller, Get } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import { AppHostError, describeContract, SERVICE_NAMES, type DescribeResponse, type ErrorEnvelope, type ServiceName } from '@apphost/contracts';
import { RequireScopes } from '../auth';

export type ServiceStatus =
  { service: ServiceName; status: 'ok'; describe: DescribeResponse } | { service: ServiceName; status: 'error'; error: ErrorEnvelope };

/** Admin view of the plane: every service's `describe`, asked over the bus, with a short per-service timeout. */
@Controller('v1/services')
export class ServicesController {
  constructor(private readonly bus: BusClient) {}

  @Get()
  @RequireScopes('admin')
  async list(): Promise<{ services: ServiceStatus[] }> {
    const services = await Promise.all(SERVICE_NAMES.map((service) => this.describe(service)));
    return { services };
  }

  private async describe(service: ServiceName): Promise<ServiceStatus> {
    try {
      return { service, status: 'ok', describe: await this.bus.request(describeContract(service), {}, { timeoutMs: 2000 }) };
    } catch (error) {
      const envelope = error instanceof AppHostError ? error.toEnvelope() : new AppHostError('INTERNAL', 'internal error').toEnvelope();
      return { service, status: 'error', error: envelope };
    }
  }
}
