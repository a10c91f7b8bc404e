import type { BusClient } from '@apphost/bus';
import type { CoordinationStore } from '@apphost/coordination';
import { LifecycleCompactAppAudit, type ResponseOf } from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { describeFailure } from '../tool-batches/batch-plan';
import type { ViewContext } from './ports';

/**
 * `view-audit:<viewId>`: how many of the View's operation records a compaction may still fold, as one counter
 * (`increment`, so counting an append is one atomic step, never a read and a write back). A compaction sets it to
 * `KNOWN_BASE` plus the ledger's exact count; below `KNOWN_BASE` (absent, counted since it went missing) the count is
 * unknown. Its TTL is when the oldest record it counts turns `maxAgeMs` old (at most the store's longest TTL): once
 * it has expired, the count is unknown again, which makes the next append compact by age.
 */
export const auditCountKeyOf = (viewId: string) => `view-audit:${viewId}`;

/** What a compaction adds to the count it writes: any smaller counter was not written by a compaction (unknown). */
export const KNOWN_BASE = 1_000_000_000;

/** The count after an append (`n`, null: unknown) and the counter as it was then (null: absent or unreadable). */
export interface Counted {
  n: number | null;
  stored: number | null;
}

/** The coordination store's longest TTL: the count never outlives its View by much. */
const COUNT_TTL_MS = 24 * 3600 * 1000;
/** Compare-and-set rounds of a reset before the count is left to the next compaction. */
const RESET_ATTEMPTS = 5;

/**
 * How many records a compaction keeps: a quarter below the bound, so a polling View compacts once every
 * `max / 4` appends rather than on every append once it reached the bound.
 */
export const keepLastOf = (maxRecordsPerView: number) => maxRecordsPerView - Math.floor(maxRecordsPerView / 4);

/**
 * The profile's per-View retention of app audit records (`viewPolicyOf(profile).audit`). For each append the View's
 * count goes up (`count`, asked while the append runs: an append that then fails was counted once too often, which
 * only brings the next compaction earlier); once the append is done and the count passes `maxRecordsPerView`, or is
 * unknown (first record, lost, unreadable, or expired because its oldest record is older than `maxAgeMs` — with a
 * `maxAgeMs` over a day, at least daily),
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
    return this.count(viewId, compactable, ageTtlOf(view.policy.audit.maxAgeMs)).then(
      (stored) => ({ n: stored !== null && stored >= KNOWN_BASE ? stored - KNOWN_BASE : null, stored }),
      (error: unknown) => {
        this.logger.warn({ viewId, error: describeFailure(error) }, 'app audit count unavailable: compacting to recount');
        return { n: null, stored: null };
      },
    );
  }

  /** The record was appended: compacts the View's records when its count says so. */
  async appended(view: ViewContext, { n, stored }: Counted): Promise<void> {
    const { viewId } = view.view.record;
    if ((n !== null && n <= view.policy.audit.maxRecordsPerView) || this.running.has(viewId)) return;
    this.running.add(viewId);
    try {
      await this.compact(view, stored);
    } finally {
      this.running.delete(viewId);
    }
  }

  /**
   * The counter after this append: counted when `compactable` (a new counter gets the age TTL: its count is unknown
   * until a compaction sets it), only read otherwise. Null: absent or unreadable.
   */
  private async count(viewId: string, compactable: boolean, ttlMs: number): Promise<number | null> {
    const key = auditCountKeyOf(viewId);
    if (compactable) return this.store.increment(key, 1, ttlMs);
    return counterOf(await this.store.get(key));
  }

  /** `countedAt`: the counter as this append left it (null: unreadable). */
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
    await this.reset(viewId, out, countedAt, maxAgeMs).catch((error: unknown) =>
      this.logger.warn({ viewId, error: describeFailure(error) }, 'app audit count not reset after a compaction; the next append recounts'),
    );
  }

  /**
   * The count as the ledger reported it, plus what other appends of the View counted meanwhile (they may or may not
   * be in the ledger's count: counting them twice only makes the next compaction come earlier, never later), with
   * the TTL of its oldest remaining record's age.
   */
  private async reset(viewId: string, out: ResponseOf<typeof LifecycleCompactAppAudit>, countedAt: number | null, maxAgeMs: number): Promise<void> {
    const key = auditCountKeyOf(viewId);
    for (let attempt = 0; attempt < RESET_ATTEMPTS; attempt++) {
      const raw = await this.store.get(key);
      const stored = counterOf(raw);
      // Counted since, on the same side of KNOWN_BASE (else another compaction reset it meanwhile: nothing to add).
      const sameBase = stored !== null && countedAt !== null && stored >= KNOWN_BASE === countedAt >= KNOWN_BASE;
      const n = out.remaining + (sameBase ? Math.max(0, stored - countedAt) : 0);
      const oldestAt = n === 0 || out.oldestRemainingAt === null ? Date.now() : Date.parse(out.oldestRemainingAt);
      const ttlMs = Math.max(1, Math.min(ageTtlOf(maxAgeMs), Math.ceil(oldestAt + maxAgeMs - Date.now())));
      const value = String(KNOWN_BASE + n);
      const written = raw === null ? await this.store.setIfAbsent(key, value, ttlMs) : await this.store.compareAndSet(key, raw, value, ttlMs);
      if (written) return;
    }
    this.logger.debug({ viewId }, 'app audit count contended during the reset; the next compaction recounts');
  }
}

/** How long a count lives when it is made: `maxAgeMs`, at most the store's longest TTL. */
function ageTtlOf(maxAgeMs: number): number {
  return Math.max(1, Math.min(COUNT_TTL_MS, maxAgeMs));
}

/** The counter's value (null: absent, or not an integer such as a count stored in an earlier format). */
function counterOf(raw: string | null): number | null {
  if (raw === null || !/^-?(0|[1-9][0-9]*)$/.test(raw)) return null;
  return Number(raw);
}
