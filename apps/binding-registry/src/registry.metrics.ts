import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { SERVICE_CONTEXT, type ServiceContext } from '@apphost/runtime';

/** The registry's own metrics on the service's registry: how many live generations it holds, and what the cap refused. */
@Injectable()
export class RegistryMetrics {
  readonly liveGenerations: Gauge;
  readonly acquireRefusals: Counter<'reason'>;

  constructor(@Inject(SERVICE_CONTEXT) context: ServiceContext) {
    const registers = [context.metrics.registry];
    this.liveGenerations = new Gauge({
      name: 'apphost_registry_live_generations',
      help: 'Connection generations this instance holds live (each may be one MCP server process)',
      registers,
    });
    this.acquireRefusals = new Counter({
      name: 'apphost_registry_acquire_refusals_total',
      help: 'Acquisitions refused by this instance, by reason (LIVE_GENERATIONS_EXHAUSTED: the live-generation cap)',
      labelNames: ['reason'],
      registers,
    });
  }
}
