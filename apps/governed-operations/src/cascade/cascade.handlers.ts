import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { GovernedPurge, GovernedRevoke, type ParsedRequestOf } from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { ConfirmationPermits } from '../confirmation/confirmation-permits';
import { BATCH_LOGGER } from '../governed.tokens';
import { ProducingGenerations } from '../views/producing-generations';
import { ViewService } from '../views/view.service';

/**
 * governed-operations in the lifecycle deletion cascade. The session state it holds is its pending confirmation
 * permits, its Views and the producing-generation records (coordination store): `revoke` makes the incarnation's
 * permits unusable (no decision takes one, none is issued) and revokes every View (`SESSION_DELETED`), releasing
 * its generation reference before anything is purged (a reference it cannot release yet fails the step, which the
 * cascade retries); `purge` deletes them all. Tool batches keep nothing after their event is appended; a batch still in flight
 * for the deleted incarnation is refused by the lifecycle-store at append (STALE_INCARNATION) and its PENDING seals
 * by the sealed-result store's fence.
 */
@Injectable()
export class CascadeHandlers {
  constructor(
    @Inject(BATCH_LOGGER) private readonly logger: Logger,
    @Inject(ConfirmationPermits) private readonly permits: ConfirmationPermits,
    @Inject(ViewService) private readonly views: ViewService,
    @Inject(ProducingGenerations) private readonly producers: ProducingGenerations,
  ) {}

  @BusHandler(GovernedRevoke)
  async revoke(r: ParsedRequestOf<typeof GovernedRevoke>): Promise<{ done: true }> {
    await this.permits.revoke(r.session, r.incarnation);
    const views = await this.views.revokeSession(r.session, r.incarnation);
    this.logger.info({ session: r.session.sessionId, incarnation: r.incarnation, views }, 'cascade revoke');
    return { done: true };
  }

  @BusHandler(GovernedPurge)
  async purge(r: ParsedRequestOf<typeof GovernedPurge>): Promise<{ done: true }> {
    const permits = await this.permits.purge(r.session, r.incarnation);
    const views = await this.views.purgeSession(r.session, r.incarnation);
    const producers = await this.producers.purge(r.session, r.incarnation);
    this.logger.info({ session: r.session.sessionId, incarnation: r.incarnation, permits, views, producers }, 'cascade purge');
    return { done: true };
  }
}
