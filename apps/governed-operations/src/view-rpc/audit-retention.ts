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
/** The count after an append (null: unknown) and when it was taken. */
export interface Counted {
  count: Count | null;
  now: number;
}

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
 * The profile's per-View retention of app audit records (`viewPolicyOf(profile).audit`). For each append the View's
 * count goes up (`count`, asked while the append runs: an append that then fails was counted once too often, which
 * only brings the next compaction earlier); once the append is done and the count passes `maxRecordsPerView`, or its
 * oldest record is older than `maxAgeMs`, or the count is unknown (first record, lost or unreadable),
 * `compact-app-audit` runs before `appended` returns — one per View per replica at a time (a concurrent append of the
 * same View does not wait for it). Best effort: a failure is logged, never thrown; the count stays past the bound, so
 * the next append retries.
 */
export class AuditRetention {
  private readonly running = new Set<string>();

  constructor(
    private readonly bus: BusClient,
    private readonly store: CoordinationStore,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Counts one operation record of the View about to be appended (`compactable` is false for one that carries a
   * sealed reference); never rejects (null: unknown). Pass the answer to `appended` once the append is done.
   */
  counted(view: ViewContext, compactable: boolean): Promise<Counted> {
    const { viewId } = view.view.record;
    const now = Date.now();
    return this.count(viewId, compactable, now).then(
      (count) => ({ count, now }),
      (error: unknown) => {
        this.logger.warn({ viewId, error: describeFailure(error) }, 'app audit count unavailable: compacting to recount');
        return { count: null, now };
      },
    );
  }

  /** The record was appended: compacts the View's records when its count says so. */
  async appended(view: ViewContext, { count, now }: Counted): Promise<void> {
    const { viewId } = view.view.record;
    const { maxRecordsPerView, maxAgeMs } = view.policy.audit;
    const due = count === null || count.n > maxRecordsPerView || (count.oldestAt !== null && now - count.oldestAt > maxAgeMs);
    if (!due || this.running.has(viewId)) return;
    this.running.add(viewId);
    try {
      await this.compact(view, count?.n ?? null);
    } finally {
      this.running.delete(viewId);
    }
  }

  /** The count after this append (null: unknown). */
  private async count(viewId: string, compactable: boolean, now: number): Promise<Count | null> {
    const key = auditCountKeyOf(viewId);
    for (let attempt = 0; attempt < COUNT_ATTEMPTS; attempt++) {
      const { raw, count } = await this.read(key);
      if (raw === null || count === null) return null;
      if (!compactable) return count;
      const next = { n: count.n + 1, oldestAt: count.oldestAt ?? now };
      if (await this.store.compareAndSet(key, raw, JSON.stringify(next), COUNT_TTL_MS)) return next;
    }
    return null;
  }

  /** The stored string (null: absent) and the count it holds (null: absent or unreadable). */
  private async read(key: string): Promise<{ raw: string | null; count: Count | null }> {
    const raw = await this.store.get(key);
    if (raw === null) return { raw, count: null };
    const parsed = countSchema.safeParse(parseJson(raw));
    return { raw, count: parsed.success ? parsed.data : null };
  }

  /** `countedAt`: the count that made this compaction due (null: unknown). */
  private async compact(view: ViewContext, countedAt: number | null): Promise<void> {
    const { viewId, session, incarnation } = view.view.record;
    const { maxRecordsPerView, maxAgeMs } = view.policy.audit;
    let out: ResponseOf<typeof LifecycleCompactAppAudit>;
    try {
      out = await this.bus.request(
        LifecycleCompactAppAudit,
        { session, incarnation, viewId, keepLast: keepLastOf(maxRecordsPerView), olderThan: new Date(Date.now() - maxAgeMs).toISOString() },
        { timeoutMs: this.timeoutMs },
      );
    } catch (error) {
      this.logger.warn({ viewId, error: describeFailure(error) }, 'app audit compaction failed; the next append retries it');
      return;
    }
    if (out.compacted > 0) this.logger.debug({ viewId, compacted: out.compacted, remaining: out.remaining }, 'app audit records compacted');
    await this.reset(viewId, out, countedAt).catch((error: unknown) =>
      this.logger.warn({ viewId, error: describeFailure(error) }, 'app audit count not reset after a compaction; the next append recounts'),
    );
  }

  /**
   * The count as the ledger reported it, plus what other appends of the View counted meanwhile (they may or may not
   * be in the ledger's count: counting them twice only makes the next compaction come earlier, never later).
   */
  private async reset(viewId: string, out: ResponseOf<typeof LifecycleCompactAppAudit>, countedAt: number | null): Promise<void> {
    const key = auditCountKeyOf(viewId);
    const oldestAt = out.oldestRemainingAt === null ? null : Date.parse(out.oldestRemainingAt);
    for (let attempt = 0; attempt < COUNT_ATTEMPTS; attempt++) {
      const { raw, count } = await this.read(key);
      const since = count !== null && countedAt !== null ? Math.max(0, count.n - countedAt) : 0;
      const n = out.remaining + since;
      const value = JSON.stringify({ n, oldestAt: n === 0 ? null : (oldestAt ?? Date.now()) } satisfies Count);
      const written = raw === null ? await this.store.setIfAbsent(key, value, COUNT_TTL_MS) : await this.store.compareAndSet(key, raw, value, COUNT_TTL_MS);
      if (written) return;
    }
    this.logger.debug({ viewId }, 'app audit count contended during the reset; the next compaction recounts');
  }
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
