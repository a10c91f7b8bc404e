import { ManualClock } from './manual-clock';

describe('ManualClock', () => {
  it('runs callbacks only when advanced past their due time, in due order, at their due time', () => {
    const clock = new ManualClock(1000);
    const ran: string[] = [];
    clock.schedule(300, () => ran.push(`b@${clock.now()}`));
    clock.schedule(100, () => ran.push(`a@${clock.now()}`));
    clock.schedule(300, () => ran.push(`c@${clock.now()}`));
    clock.advance(99);
    expect(ran).toEqual([]);
    expect(clock.now()).toBe(1099);
    clock.advance(1);
    expect(ran).toEqual(['a@1100']);
    clock.advance(500);
    expect(ran).toEqual(['a@1100', 'b@1300', 'c@1300']);
    expect(clock.now()).toBe(1600);
    expect(clock.scheduled).toBe(0);
  });

  it('cancels idempotently, and runs callbacks scheduled by callbacks within the same step', () => {
    const clock = new ManualClock(0);
    const ran: number[] = [];
    const cancel = clock.schedule(10, () => ran.push(-1));
    cancel();
    cancel();
    clock.schedule(10, () => clock.schedule(10, () => ran.push(clock.now())));
    clock.advance(15);
    expect(ran).toEqual([]);
    expect(clock.scheduled).toBe(1);
    clock.advance(5);
    expect(ran).toEqual([20]);
    expect(() => clock.advance(-1)).toThrow(/only moves forward/);
  });
});
