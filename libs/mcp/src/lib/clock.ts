/** Cancels a scheduled callback; calling it again, or after the callback ran, does nothing. */
export type CancelScheduled = () => void;

/**
 * Time as the code that owns deadlines and timers sees it: the wall clock and one-shot callbacks. Services get
 * `systemClock`; a test hands in a manual clock (`ManualClock` in `@apphost/testing`) and advances it instead of
 * waiting, so idle eviction, lifetimes and flow deadlines are decided deterministically.
 */
export interface Clock {
  /** Milliseconds since the epoch, like `Date.now()`. */
  now(): number;
  /** Runs `fn` once, `ms` from now. A pending callback never keeps the process alive. */
  schedule(ms: number, fn: () => void): CancelScheduled;
}

/** Real time: `Date.now()` and unref'd `setTimeout`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(ms, fn) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
