import { randomUUID } from 'node:crypto';
import type { Logger } from '@apphost/runtime';
import type { GenerationsRepository } from '../store/generations.repository';
import type { RegistryInstance } from '../registry.tokens';

/**
 * This process's ownership lease. Registering starts a new incarnation (generations of an earlier one are
 * GONE); a heartbeat renews the lease every third of its length. Ownership is valid locally only until the
 * last successful renewal's deadline (minus a safety margin): past it, or when a renewal finds the lease over,
 * the process fences itself — it ends every generation it holds — because another replica may now claim them.
 *
 * A lapsed lease is never renewed: the incarnation is over. The next heartbeat that reaches PostgreSQL registers
 * a new incarnation (written into `instance`, so new claims carry it), which declares every generation of the old
 * one GONE in the same transaction; only then does this process count as alive again (docs/decisions/0010).
 */
export class InstanceLease {
  private validUntil = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The current incarnation's lease is over; only a new incarnation may own generations again. */
  private fenced = false;

  constructor(
    private readonly repository: GenerationsRepository,
    private readonly instance: RegistryInstance,
    private readonly leaseMs: number,
    private readonly logger: Logger,
    private readonly onLost: (reason: string) => Promise<void>,
  ) {}

  async start(): Promise<void> {
    const started = Date.now();
    const { gone } = await this.repository.registerInstance(this.instance.instanceId, this.instance.incarnation, this.leaseMs);
    this.validUntil = started + this.leaseMs - this.margin;
    if (gone > 0) this.logger.warn({ gone }, 'generations of a previous incarnation of this instance are gone');
    this.schedule();
  }

  valid(): boolean {
    return !this.stopped && !this.fenced && Date.now() < this.validUntil;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.repository.stopInstance(this.instance.instanceId, this.instance.incarnation);
  }

  private get margin(): number {
    return Math.min(1000, Math.floor(this.leaseMs / 5));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.beat(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    try {
      await this.renew();
    } catch (err) {
      this.logger.warn({ err }, 'ownership lease renewal failed');
      if (!this.fenced && !this.valid()) await this.fence('OWNERSHIP_LEASE_LAPSED');
    }
    this.schedule();
  }

  private async renew(): Promise<void> {
    const started = Date.now();
    if (!this.fenced) {
      if (await this.repository.renewLease(this.instance.instanceId, this.instance.incarnation, this.leaseMs)) {
        this.validUntil = started + this.leaseMs - this.margin;
        return;
      }
      await this.fence('OWNERSHIP_LOST');
    }
    await this.reincarnate(started);
  }

  private async fence(reason: string): Promise<void> {
    this.fenced = true;
    this.validUntil = 0;
    this.logger.error({ reason, incarnation: this.instance.incarnation }, 'ownership lease over: fencing (every generation held here ends)');
    await this.onLost(reason);
  }

  private async reincarnate(started: number): Promise<void> {
    if (this.stopped) return;
    const previous = this.instance.incarnation;
    const incarnation = randomUUID();
    const { registered, gone } = await this.repository.registerInstance(this.instance.instanceId, incarnation, this.leaseMs, previous);
    if (!registered) {
      this.logger.error({ instanceId: this.instance.instanceId }, 'another process holds this instance id live: staying fenced');
      return;
    }
    // A claim that was already under way when the lease lapsed may have added a generation since the fence: the old
    // incarnation's rows are GONE now, so it goes too, before the new incarnation can claim anything.
    await this.onLost('OWNER_REINCARNATED');
    this.instance.incarnation = incarnation;
    this.validUntil = started + this.leaseMs - this.margin;
    this.fenced = false;
    this.logger.warn({ previous, incarnation, gone }, 'ownership re-established under a new incarnation');
  }
}
