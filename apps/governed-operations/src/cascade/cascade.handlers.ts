import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { GovernedPurge, GovernedRevoke, type ParsedRequestOf } from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { BATCH_LOGGER } from '../governed.tokens';

/**
 * governed-operations in the lifecycle deletion cascade. It holds no durable session data (tool batches keep
 * nothing after their event is appended), so both steps only acknowledge; a batch still in flight for the deleted
 * incarnation is refused by the lifecycle-store at append (STALE_INCARNATION) and its PENDING seals by the
 * sealed-result store's fence.
 */
@Injectable()
export class CascadeHandlers {
  constructor(@Inject(BATCH_LOGGER) private readonly logger: Logger) {}

  @BusHandler(GovernedRevoke)
  revoke(r: ParsedRequestOf<typeof GovernedRevoke>): { done: true } {
    this.logger.info({ session: r.session.sessionId, incarnation: r.incarnation }, 'cascade revoke');
    return { done: true };
  }

  @BusHandler(GovernedPurge)
  purge(r: ParsedRequestOf<typeof GovernedPurge>): { done: true } {
    this.logger.info({ session: r.session.sessionId, incarnation: r.incarnation }, 'cascade purge');
    return { done: true };
  }
}
