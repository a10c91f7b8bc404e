import { Controller, Get, Header, HttpStatus, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ReadinessService } from './readiness';
import { SERVICE_CONTEXT } from './runtime.tokens';
import type { ServiceContext } from './service-definition';
import { Public } from './public.decorator';

/** Kubernetes probes and Prometheus scrape target; never authenticated, never reveal secrets. */
@Public()
@Controller()
export class OpsController {
  constructor(
    private readonly readiness: ReadinessService,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Get('healthz')
  health(): { status: 'ok'; service: string; instanceId: string } {
    return { status: 'ok', service: this.context.service, instanceId: this.context.config.INSTANCE_ID };
  }

  @Get('readyz')
  async ready(@Res() res: Response): Promise<void> {
    const readiness = await this.readiness.check();
    res.status(readiness.ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE).json({ status: readiness.ready ? 'ready' : 'not-ready', ...readiness });
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.context.metrics.registry.metrics();
  }
}
