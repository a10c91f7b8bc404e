import type { CancelScheduled, Clock } from '@apphost/mcp';

interface Scheduled {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A `Clock` that moves only when the test says so: `advance(ms)` runs every callback that falls due, in due order
 * (ties in scheduling order), with `now()` at each one's due time; callbacks scheduled meanwhile run too when they
 * fall within the step. A test hands it to a service instead of waiting for real time to pass.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly pending = new Set<Scheduled>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  schedule(ms: number, fn: () => void): CancelScheduled {
    const entry: Scheduled = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.pending.add(entry);
    return () => void this.pending.delete(entry);
  }

  /** Moves time forward by `ms` (≥ 0), running what falls due on the way. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new Error(`a manual clock only moves forward (asked ${ms} ms)`);
    const target = this.current + ms;
    for (let next = this.nextDue(target); next; next = this.nextDue(target)) {
      this.pending.delete(next);
      this.current = next.at;
      next.fn();
    }
    this.current = target;
  }

  /** How many callbacks are waiting to fall due. */
  get scheduled(): number {
    return this.pending.size;
  }

  private nextDue(until: number): Scheduled | undefined {
    let best: Scheduled | undefined;
    for (const entry of this.pending) if (entry.at <= until && (!best || entry.at < best.at || (entry.at === best.at && entry.seq < best.seq))) best = entry;
    return best;
  }
}
