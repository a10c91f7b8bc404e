import { FaultPoints, InjectedFault } from './fault-points';

describe('FaultPoints', () => {
  it('does nothing at an unarmed point', async () => {
    await expect(new FaultPoints().hit('commit.after-write')).resolves.toBeUndefined();
  });

  it('throws an InjectedFault once per arming, then disarms itself', async () => {
    const faults = new FaultPoints<'commit.after-write'>();
    faults.arm('commit.after-write');
    await expect(faults.hit('commit.after-write')).rejects.toBeInstanceOf(InjectedFault);
    await expect(faults.hit('commit.after-write')).resolves.toBeUndefined();
  });

  it('runs a custom action the given number of times', async () => {
    const faults = new FaultPoints<'p.before-step'>();
    let runs = 0;
    faults.arm('p.before-step', () => void runs++, 2);
    await faults.hit('p.before-step');
    await faults.hit('p.before-step');
    await faults.hit('p.before-step');
    expect(runs).toBe(2);
  });

  it('disarms one point or all of them', async () => {
    const faults = new FaultPoints<'a.before-step' | 'b.after-step'>();
    faults.arm('a.before-step');
    faults.arm('b.after-step');
    faults.disarm('a.before-step');
    await expect(faults.hit('a.before-step')).resolves.toBeUndefined();
    faults.disarm();
    await expect(faults.hit('b.after-step')).resolves.toBeUndefined();
  });

  it('accepts only names of the scheme <operation>.<moment>-<step>', () => {
    // @ts-expect-error a colon is not the scheme's separator
    new FaultPoints<'commit:after-write'>();
    // @ts-expect-error the moment is before, inside or after
    new FaultPoints<'commit.during-write'>();
    // @ts-expect-error a point names its operation
    new FaultPoints<'after-write'>();
    expect(new FaultPoints<'commit.inside-write'>()).toBeInstanceOf(FaultPoints);
  });
});
