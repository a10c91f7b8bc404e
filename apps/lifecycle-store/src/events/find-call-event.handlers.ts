import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { LifecycleFindCallEvent, LifecycleOpenBatch, type ParsedRequestOf } from '@apphost/contracts';
import { LifecycleMetrics } from '../metrics';
import { LIFECYCLE_DATABASE } from '../lifecycle.tokens';
import type { ServiceDatabase } from '@apphost/persistence';
import { LifecycleRepository } from '../sessions/lifecycle.repository';
import { CallEventLookupRepository } from './call-event-lookup.repository';
import { MessagesService } from '../messages/messages.service';
import { findCallEvent, openBatch } from './find-call-event';

/** The ledger's call-id lookup (idempotent batch replay, proof that a confirmation was issued), alone or with a batch's other opening reads. */
@Injectable()
export class FindCallEventHandlers {
  private readonly deps: Parameters<typeof findCallEvent>[0] & Parameters<typeof openBatch>[0];

  constructor(
    @Inject(LIFECYCLE_DATABASE) database: ServiceDatabase,
    @Inject(LifecycleMetrics) metrics: LifecycleMetrics,
    @Inject(MessagesService) messages: MessagesService,
  ) {
    this.deps = {
      repo: new LifecycleRepository(database),
      metrics,
      lookup: new CallEventLookupRepository(database),
      retentionMs: messages.retentionMs,
    };
  }

  @BusHandler(LifecycleFindCallEvent)
  find(request: ParsedRequestOf<typeof LifecycleFindCallEvent>) {
    return findCallEvent(this.deps, request);
  }

  @BusHandler(LifecycleOpenBatch)
  openBatch(request: ParsedRequestOf<typeof LifecycleOpenBatch>) {
    return openBatch(this.deps, request);
  }
}
