import type { AppAuditRecord } from '@apphost/contracts';

export type AppAuditSummary = Extract<AppAuditRecord, { kind: 'summary' }>;

/** What compaction reads of one operation record it folds. */
export interface FoldedOperation {
  decision: string;
  outcome: string;
  /** The record's `at`, or the event's creation time when the record has none. */
  at: string;
}

const add = (counts: Record<string, number>, key: string, n = 1): void => {
  counts[key] = (counts[key] ?? 0) + n;
};
const earlier = (a: string, b: string): string => (Date.parse(a) <= Date.parse(b) ? a : b);
const later = (a: string, b: string): string => (Date.parse(a) >= Date.parse(b) ? a : b);

/**
 * One View's summary after a compaction: the previous summaries (normally one) and the operation records folded now,
 * counted by decision and by outcome, with the first and last timestamps. Cumulative: nothing counted is ever lost.
 */
export function foldSummary(viewId: string, previous: readonly AppAuditSummary[], folded: readonly FoldedOperation[]): AppAuditSummary {
  const byDecision: Record<string, number> = {};
  const byOutcome: Record<string, number> = {};
  let count = 0;
  let firstAt: string | null = null;
  let lastAt: string | null = null;
  for (const summary of previous) {
    count += summary.count;
    for (const [k, n] of Object.entries(summary.byDecision)) add(byDecision, k, n);
    for (const [k, n] of Object.entries(summary.byOutcome)) add(byOutcome, k, n);
    firstAt = firstAt === null ? summary.firstAt : earlier(firstAt, summary.firstAt);
    lastAt = lastAt === null ? summary.lastAt : later(lastAt, summary.lastAt);
  }
  for (const op of folded) {
    count++;
    add(byDecision, op.decision);
    add(byOutcome, op.outcome);
    firstAt = firstAt === null ? op.at : earlier(firstAt, op.at);
    lastAt = lastAt === null ? op.at : later(lastAt, op.at);
  }
  if (firstAt === null || lastAt === null) throw new Error('a summary folds at least one record');
  return { kind: 'summary', viewId, count, byDecision, byOutcome, firstAt, lastAt };
}
