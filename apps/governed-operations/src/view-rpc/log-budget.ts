import type { Logger } from '@apphost/runtime';

/** Views whose budget one replica tracks at once; past it the longest-unseen View's is forgotten (it starts afresh). */
const MAX_TRACKED_VIEWS = 10_000;
const WINDOW_MS = 60_000;

interface Window {
  startedAt: number;
  used: number;
  dropped: number;
}

/**
 * A per-View budget of log lines per minute, in this process, so a chatty View cannot flood the log. Over budget,
 * lines are dropped and counted: one warning when dropping starts, and the count once the minute is over (on the
 * View's next line, or when the View is forgotten to make room).
 */
export class LogBudget {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly what: string,
    private readonly linesPerMinute: number,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** Runs `line` if the View has budget left this minute; else counts it as dropped. */
  log(viewId: string, line: () => void): void {
    const window = this.windowOf(viewId);
    if (window.used < this.linesPerMinute) {
      window.used++;
      line();
      return;
    }
    if (window.dropped++ === 0) {
      this.logger.warn({ viewId, limit: this.linesPerMinute }, `${this.what} of a View over its budget: dropping its lines for the rest of the minute`);
    }
  }

  private windowOf(viewId: string): Window {
    const now = this.now();
    const current = this.windows.get(viewId);
    if (current && now - current.startedAt < WINDOW_MS) return current;
    if (current) this.forget(viewId, current);
    // Inserted anew, so the map's order is least recently renewed first and eviction takes the longest-unseen View.
    if (this.windows.size >= MAX_TRACKED_VIEWS) {
      const [oldest, window] = this.windows.entries().next().value as [string, Window];
      this.forget(oldest, window);
    }
    const fresh = { startedAt: now, used: 0, dropped: 0 };
    this.windows.set(viewId, fresh);
    return fresh;
  }

  /** Ends a View's window, reporting what it dropped. */
  private forget(viewId: string, window: Window): void {
    this.windows.delete(viewId);
    if (window.dropped) this.logger.warn({ viewId, dropped: window.dropped, limit: this.linesPerMinute }, `${this.what} lines of a View dropped`);
  }
}
