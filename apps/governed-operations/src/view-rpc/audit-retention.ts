import { z } from 'zod';
import type { BusClient } from '@apphost/bus';
import type { CoordinationStore } from '@apphost/coordination';
import { LifecycleCompactAppAudit, type ResponseOf } from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { describeFailure } from '../tool-batches/batch-plan';
import type { ViewContext } from './ports';

/**
 * `view-audit:<viewId>`: how many of the View's operation records a compaction may still fold, and when the oldest
 * of them was appended. A cheap estimate between compactions; every compaction resets it to the ledger's exact count.
 */
export const auditCountKeyOf = (viewId: string) => `view-audit:${viewId}`;

const countSchema = z.strictObject({ n: z.number().int().min(0), oldestAt: z.number().nullable() });
type Count = z.infer<typeof countSchema>;

/** The coordination store's longest TTL: the count never outlives its View by much. */
const COUNT_TTL_MS = 24 * 3600 * 1000;
/** Compare-and-set rounds before the count is treated as unknown (which makes a compaction recount it). */
const COUNT_ATTEMPTS = 5;

/**
 * How many records a compaction keeps: a quarter below the bound, so a polling View compacts once every
 * `max / 4` appends rather than on every append once it reached the bound.
 */
export const keepLastOf = (maxRecordsPerView: number) => maxRecordsPerView - Math.floor(maxRecordsPerView / 4);

/**
 * The profile's per-View retention of app audit records (`viewPolicyOf(profile).audit`). After each append the View's
 * count goes up; once it passes `maxRecordsPerView`, or its oldest record is older than `maxAgeMs`, or the count is
 * unknown (first record, lost or unreadable), `compact-app-audit` runs in the background — at most one per View per
 * replica at a time. Best effort: a failure is logged, the count stays past the bound, and the next append retries.
 */
export class AuditRetention {
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly bus: BusClient,
    private readonly store: CoordinationStore,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  /** One operation record of the View was appended; `compactable` is false for one that carries a sealed reference. */
  async appended(view: ViewContext, compactable: boolean): Promise<void> {
    const { maxRecordsPerView, maxAgeMs } = view.policy.audit;
    const now = Date.now();
    const count = await this.count(view.view.record.viewId, compactable, now).catch((error: unknown) => {
      this.logger.warn({ viewId: view.view.record.viewId, error: describeFailure(error) }, 'app audit count unavailable: compacting to recount');
      return null;
    });
    if (count === null || count.n > maxRecordsPerView || (count.oldestAt !== null && now - count.oldestAt > maxAgeMs)) this.compactInBackground(view);
  }

  /** Resolves once no compaction started by this instance is running (tests; shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  /** The count after this append (null: unknown). */
  private async count(viewId: string, compactable: boolean, now: number): Promise<Count | null> {
    const key = auditCountKeyOf(viewId);
    for (let attempt = 0; attempt < COUNT_ATTEMPTS; attempt++) {
      const raw = await this.store.get(key);
      const current = raw === null ? null : countSchema.safeParse(JSON.parse(raw));
      if (!current?.success) return null;
      if (!compactable) return current.data;
      const next = { n: current.data.n + 1, oldestAt: current.data.oldestAt ?? now };
      if (await this.store.compareAndSet(key, raw!, JSON.stringify(next), COUNT_TTL_MS)) return next;
    }
    return null;
  }

  private compactInBackground(view: ViewContext): void {
    const { viewId } = view.view.record;
    if (this.running.has(viewId)) return;
    const run = this.compact(view).finally(() => this.running.delete(viewId));
    this.running.set(viewId, run);
  }

  private async compact(view: ViewContext): Promise<void> {
    const { viewId, session, incarnation } = view.view.record;
    const { maxRecordsPerView, maxAgeMs } = view.policy.audit;
    try {
      const out = await this.bus.request(
        LifecycleCompactAppAudit,
        { session, incarnation, viewId, keepLast: keepLastOf(maxRecordsPerView), olderThan: new Date(Date.now() - maxAgeMs).toISOString() },
        { timeoutMs: this.timeoutMs },
      );
      await this.reset(viewId, out);
      if (out.compacted > 0) this.logger.debug({ viewId, compacted: out.compacted, remaining: out.remaining }, 'app audit records compacted');
    } catch (error) {
      this.logger.warn({ viewId, error: describeFailure(error) }, 'app audit compaction failed; the next append retries it');
    }
  }

  /**
   * The count as the ledger has it now. Losing a race with an append's increment means that increment is absorbed
   * into the exact count (or missed by one): the bound is off by at most the appends racing a compaction.
   */
  private async reset(viewId: string, out: ResponseOf<typeof LifecycleCompactAppAudit>): Promise<void> {
    const key = auditCountKeyOf(viewId);
    const value = JSON.stringify({ n: out.remaining, oldestAt: out.oldestRemainingAt === null ? null : Date.parse(out.oldestRemainingAt) } satisfies Count);
    const raw = await this.store.get(key);
    const written = raw === null ? await this.store.setIfAbsent(key, value, COUNT_TTL_MS) : await this.store.compareAndSet(key, raw, value, COUNT_TTL_MS);
    if (!written) this.logger.debug({ viewId }, 'app audit count changed during the reset; kept the newer value');
  }
}
