import type { Logger } from '@apphost/runtime';
import type { GenerationsRepository } from '../store/generations.repository';

/**
 * This process's ownership lease. Registering starts a new incarnation (generations of an earlier one are
 * GONE); a heartbeat renews the lease every third of its length. Ownership is valid locally only until the
 * last successful renewal's deadline (minus a safety margin): past it, or when a renewal finds the row taken,
 * the process fences itself — it ends every generation it holds — because another replica may now claim them.
 */
export class InstanceLease {
  private validUntil = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly repository: GenerationsRepository,
    private readonly instanceId: string,
    private readonly incarnation: string,
    private readonly leaseMs: number,
    private readonly logger: Logger,
    private readonly onLost: (reason: string) => Promise<void>,
  ) {}

  async start(): Promise<void> {
    const started = Date.now();
    const gone = await this.repository.registerInstance(this.instanceId, this.incarnation, this.leaseMs);
    this.validUntil = started + this.leaseMs - this.margin;
    if (gone > 0) this.logger.warn({ gone }, 'generations of a previous incarnation of this instance are gone');
    this.schedule();
  }

  valid(): boolean {
    return !this.stopped && Date.now() < this.validUntil;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.repository.stopInstance(this.instanceId, this.incarnation);
  }

  private get margin(): number {
    return Math.min(1000, Math.floor(this.leaseMs / 5));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    const started = Date.now();
    try {
      if (await this.repository.renewLease(this.instanceId, this.incarnation, this.leaseMs)) {
        this.validUntil = started + this.leaseMs - this.margin;
      } else {
        this.validUntil = 0;
        this.logger.error('ownership lease lost: another incarnation holds this instance id; fencing');
        await this.onLost('OWNERSHIP_LOST');
      }
    } catch (err) {
      this.logger.warn({ err }, 'ownership lease renewal failed');
      if (!this.valid()) await this.onLost('OWNERSHIP_LEASE_LAPSED');
    }
    this.schedule();
  }
}
