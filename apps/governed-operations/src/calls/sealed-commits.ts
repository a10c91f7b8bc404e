import type { OnApplicationShutdown } from '@nestjs/common';
import type { SessionKey } from '@apphost/contracts';
import type { FaultPoints, Logger } from '@apphost/runtime';
import type { SealedResultClient } from '@apphost/sealed-results';
import { describeFailure } from '../tool-batches/batch-plan';
import type { GovernedFaultPoint } from '../governed.faults';
import type { GovernedMetrics } from '../governed.metrics';

/** One sealed reference an appended event carries. */
export interface SealedReference {
  functionCallId: string;
  recordId: string;
}

/**
 * Commits of sealed references to their appended event, off the reply path. The event is durable before a commit
 * starts, so waiting for it buys no guarantee: a commit that fails or never runs is repaired by the sealed store
 * (its recovery pass and GC ask the ledger and commit the record to the event; a `resolve` naming the event binds
 * it). Every commit is tracked until it settles, so shutdown waits for them (at most `drainMs`), and each outcome
 * is counted.
 */
export class SealedCommits implements OnApplicationShutdown {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly sealed: SealedResultClient,
    private readonly faults: FaultPoints<GovernedFaultPoint>,
    private readonly metrics: GovernedMetrics,
    private readonly logger: Logger,
    private readonly drainMs: number,
  ) {}

  /** Starts committing each reference to `eventId` and returns at once; the commits are tracked, never awaited here. */
  start(scope: { key: SessionKey; incarnation: number }, eventId: number, references: readonly SealedReference[]): void {
    for (const reference of references) {
      const commit = this.commit(scope, eventId, reference).finally(() => this.inFlight.delete(commit));
      this.inFlight.add(commit);
    }
  }

  /** How many commits have started and not settled yet. */
  get pending(): number {
    return this.inFlight.size;
  }

  /** Resolves once every commit started so far has settled (true), or after `boundMs` with some still in flight (false). */
  async drain(boundMs: number): Promise<boolean> {
    if (this.inFlight.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), boundMs)));
    const settled = Promise.allSettled([...this.inFlight]).then(() => true as const);
    try {
      return await Promise.race([settled, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs after the bus server drained its handlers, so no batch starts a commit behind this wait. */
  async onApplicationShutdown(): Promise<void> {
    if (!(await this.drain(this.drainMs)))
      this.logger.warn(
        { inFlight: this.inFlight.size, drainMs: this.drainMs },
        'sealed reference commits still in flight at shutdown: the sealed store recovery pass commits them',
      );
  }

  private async commit(scope: { key: SessionKey; incarnation: number }, eventId: number, reference: SealedReference): Promise<void> {
    try {
      await this.faults.hit('batch.before-commit');
      await this.sealed.commit({
        session: scope.key,
        incarnation: scope.incarnation,
        eventId: String(eventId),
        functionCallId: reference.functionCallId,
        recordId: reference.recordId,
      });
      this.metrics.sealedCommits.inc({ outcome: 'committed' });
    } catch (error) {
      this.metrics.sealedCommits.inc({ outcome: 'failed' });
      // The event stands: the sealed store's recovery pass (and GC, which asks the ledger before deleting)
      // commits the record to it; a resolve naming the event binds it too.
      this.logger.warn(
        { session: scope.key.sessionId, eventId, functionCallId: reference.functionCallId, error: describeFailure(error) },
        'sealed reference commit failed after the append',
      );
    }
  }
}
