/** What the bus needs beyond the wait itself: the store's query and the reply's way back. */
export const LONG_POLL_MARGIN_MS = 2_000;

/**
 * The wait a long poll may ask the lifecycle-store for, and the bus timeout of that request: the timeout always
 * exceeds the wait by the margin, so an empty answer arrives as an empty page rather than a 504. A request deadline
 * (HTTP_REQUEST_TIMEOUT_MS or a shorter `x-apphost-timeout-ms`) too close for the whole wait shortens the wait.
 */
export function longPollBudget(waitMs: number, deadline: number | undefined, now = Date.now()): { waitMs: number; timeoutMs: number } {
  const remaining = deadline === undefined ? Infinity : deadline - now;
  const wait = Math.max(0, Math.min(waitMs, remaining - LONG_POLL_MARGIN_MS));
  return { waitMs: wait, timeoutMs: wait + LONG_POLL_MARGIN_MS };
}
