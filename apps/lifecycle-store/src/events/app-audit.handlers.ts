import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { LifecycleCompactAppAudit, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import type { ServiceDatabase } from '@apphost/persistence';
import { LIFECYCLE_DATABASE } from '../lifecycle.tokens';
import { LifecycleMetrics } from '../metrics';
import { loadOrAdopt } from '../sessions/adoption';
import { LifecycleRepository } from '../sessions/lifecycle.repository';
import { failedPrecondition, notFound } from '../sessions/replies';
import { AppAuditRepository } from './app-audit.repository';
import { admissible } from './events.service';

/** App audit retention (`compact-app-audit`): governed-operations asks for it when a View's records pass the profile's bound. */
@Injectable()
export class AppAuditHandlers {
  private readonly repo: LifecycleRepository;
  private readonly audit: AppAuditRepository;

  constructor(
    @Inject(LIFECYCLE_DATABASE) database: ServiceDatabase,
    @Inject(LifecycleMetrics) private readonly metrics: LifecycleMetrics,
  ) {
    this.repo = new LifecycleRepository(database);
    this.audit = new AppAuditRepository(database);
  }

  @BusHandler(LifecycleCompactAppAudit)
  async compact(request: ParsedRequestOf<typeof LifecycleCompactAppAudit>): Promise<ResponseOf<typeof LifecycleCompactAppAudit>> {
    const { session, incarnation, viewId, keepLast } = request;
    const olderThan = request.olderThan === undefined ? null : new Date(request.olderThan);
    let outcome = await this.audit.compact(session, incarnation, viewId, keepLast, olderThan);
    if (!outcome) {
      // Nothing was done: say why (absent, deleted, another incarnation, still creating), adopting a legacy row first.
      const record = await loadOrAdopt(this.repo, this.metrics, session);
      if (!record || record.state === 'DELETED') throw notFound(session);
      admissible(record, incarnation);
      outcome = await this.audit.compact(session, incarnation, viewId, keepLast, olderThan);
      if (!outcome)
        throw failedPrecondition('STALE_INCARNATION', `session ${session.sessionId} changed while compacting; re-read it`, {
          incarnation: record.incarnation,
          state: record.state,
        });
    }
    return { incarnation, ...outcome };
  }
}
