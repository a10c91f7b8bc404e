import { randomBytes } from 'node:crypto';
import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { CoordinationStore } from '@apphost/coordination';
import type { Logger } from '@apphost/runtime';

/** A key lapses after this many missed refreshes: the owner is then taken for dead. */
const MISSED_REFRESHES = 3;

/**
 * This process's liveness in the coordination store, so a duplicate can tell a batch still running from one whose
 * process died. The owner id is the instance id plus a per-boot suffix: a restarted process with the same
 * INSTANCE_ID is a new owner, so it never vouches for the claims of its dead predecessor.
 */
export class OwnerHeartbeat implements OnModuleInit, OnApplicationShutdown {
  readonly ownerId: string;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly store: CoordinationStore,
    instanceId: string,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {
    this.ownerId = `${instanceId}.${randomBytes(4).toString('hex')}`;
  }

  /** Whether `ownerId` refreshed its key within the last few intervals. Rejects UNAVAILABLE if the store is down. */
  async isAlive(ownerId: string): Promise<boolean> {
    return (await this.store.get(keyOf(ownerId))) !== null;
  }

  onModuleInit(): Promise<void> {
    return this.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  /** Writes the key now (a down store is logged, not fatal: refreshes retry) and refreshes it every interval. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), this.intervalMs);
    this.timer.unref();
  }

  /** Clean shutdown: the key goes at once, so nothing waits on this process's claims. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.store.compareAndDelete(keyOf(this.ownerId), this.ownerId).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    const ttlMs = this.intervalMs * MISSED_REFRESHES;
    try {
      // Refresh while held; after a lapse (a store outage longer than the TTL) write it anew.
      if (!(await this.store.compareAndExpire(keyOf(this.ownerId), this.ownerId, ttlMs)))
        await this.store.setIfAbsent(keyOf(this.ownerId), this.ownerId, ttlMs);
    } catch (error) {
      this.logger.warn({ ownerId: this.ownerId, error: (error as Error).message }, 'owner heartbeat not refreshed');
    }
  }
}

function keyOf(ownerId: string): string {
  return `owner-heartbeat:${ownerId}`;
}
