import { LONG_POLL_MARGIN_MS, longPollBudget } from './long-poll';

describe('longPollBudget', () => {
  it('asks for the whole wait when the deadline leaves room, with a bus timeout past it', () => {
    expect(longPollBudget(30_000, 1_000_000 + 120_000, 1_000_000)).toEqual({ waitMs: 30_000, timeoutMs: 30_000 + LONG_POLL_MARGIN_MS });
    expect(longPollBudget(5_000, undefined)).toEqual({ waitMs: 5_000, timeoutMs: 5_000 + LONG_POLL_MARGIN_MS });
  });

  it('shortens the wait to what the deadline leaves after the margin, never below zero', () => {
    expect(longPollBudget(30_000, 10_000, 0)).toEqual({ waitMs: 10_000 - LONG_POLL_MARGIN_MS, timeoutMs: 10_000 });
    expect(longPollBudget(30_000, 500, 0)).toEqual({ waitMs: 0, timeoutMs: LONG_POLL_MARGIN_MS });
    expect(longPollBudget(0, 120_000, 0)).toEqual({ waitMs: 0, timeoutMs: LONG_POLL_MARGIN_MS });
  });
});
