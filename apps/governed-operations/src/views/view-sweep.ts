import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Logger } from '@apphost/runtime';
import { describeFailure } from '../tool-batches/batch-plan';
import type { ViewRecords } from './view-records';
import type { ViewTeardown } from './view-teardown';

/** A bootstrap older than this is taken to have crashed: its record is ended and its reference released. */
const ABANDONED_OPENING_MS = 5 * 60_000;

/**
 * The small background pass that finishes what a crash left (every `sweepMs`, on every replica; each change is a
 * compare-and-set, so replicas sweeping together end each View once): an ended View whose reference is still held
 * is released, an abandoned bootstrap is ended and released, a live View whose lease ran out is revoked
 * (`LEASE_EXPIRED`), so its generation becomes evictable without anyone touching the View. It scans the View keys:
 * meant for the modest number of live Views one deployment holds.
 */
export class ViewSweep implements OnModuleInit, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly records: ViewRecords,
    private readonly teardown: ViewTeardown,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  onModuleInit(): void {
    this.start();
  }

  onApplicationShutdown(): void {
    this.stop();
  }

  start(): void {
    if (this.intervalMs === 0 || this.timer) return;
    this.timer = setInterval(
      () => void this.sweep().catch((error: unknown) => this.logger.warn({ error: describeFailure(error) }, 'view sweep failed')),
      this.intervalMs,
    );
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass; returns how many Views it changed. */
  async sweep(now = Date.now()): Promise<number> {
    let changed = 0;
    for (const viewId of await this.records.all()) {
      const stored = await this.records.find(viewId);
      if (!stored) continue;
      const { record } = stored;
      if (record.state === 'CLOSED' || record.state === 'REVOKED') {
        if (!record.released && (await this.teardown.finish(stored)).record.released) changed++;
      } else if (record.state === 'OPENING' && Date.parse(record.createdAt) + ABANDONED_OPENING_MS <= now) {
        if ((await this.teardown.end(viewId, 'TORN_DOWN'))?.ended) changed++;
      } else if (record.state === 'ACTIVE' && record.expiresAt !== null && Date.parse(record.expiresAt) <= now) {
        if ((await this.teardown.end(viewId, 'LEASE_EXPIRED'))?.ended) changed++;
      }
    }
    return changed;
  }
}
