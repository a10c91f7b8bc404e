import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { GovernedPurge, GovernedRevoke, type ParsedRequestOf } from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { ConfirmationPermits } from '../confirmation/confirmation-permits';
import { BATCH_LOGGER } from '../governed.tokens';

/**
 * governed-operations in the lifecycle deletion cascade. The session state it holds is its pending confirmation
 * permits (coordination store): `revoke` makes the incarnation's permits unusable (no decision takes one, none is
 * issued), `purge` deletes them. Tool batches keep nothing after their event is appended; a batch still in flight
 * for the deleted incarnation is refused by the lifecycle-store at append (STALE_INCARNATION) and its PENDING seals
 * by the sealed-result store's fence.
 */
@Injectable()
export class CascadeHandlers {
  constructor(
    @Inject(BATCH_LOGGER) private readonly logger: Logger,
    @Inject(ConfirmationPermits) private readonly permits: ConfirmationPermits,
  ) {}

  @BusHandler(GovernedRevoke)
  async revoke(r: ParsedRequestOf<typeof GovernedRevoke>): Promise<{ done: true }> {
    await this.permits.revoke(r.session, r.incarnation);
    this.logger.info({ session: r.session.sessionId, incarnation: r.incarnation }, 'cascade revoke');
    return { done: true };
  }

  @BusHandler(GovernedPurge)
  async purge(r: ParsedRequestOf<typeof GovernedPurge>): Promise<{ done: true }> {
    const permits = await this.permits.purge(r.session, r.incarnation);
    this.logger.info({ session: r.session.sessionId, incarnation: r.incarnation, permits }, 'cascade purge');
    return { done: true };
  }
}
