import { FaultPoints, InjectedFault } from './fault-points';

describe('FaultPoints', () => {
  it('does nothing at an unarmed point', async () => {
    await expect(new FaultPoints().hit('after-commit')).resolves.toBeUndefined();
  });

  it('throws an InjectedFault once per arming, then disarms itself', async () => {
    const faults = new FaultPoints<'after-commit'>();
    faults.arm('after-commit');
    await expect(faults.hit('after-commit')).rejects.toBeInstanceOf(InjectedFault);
    await expect(faults.hit('after-commit')).resolves.toBeUndefined();
  });

  it('runs a custom action the given number of times', async () => {
    const faults = new FaultPoints<'p'>();
    let runs = 0;
    faults.arm('p', () => void runs++, 2);
    await faults.hit('p');
    await faults.hit('p');
    await faults.hit('p');
    expect(runs).toBe(2);
  });

  it('disarms one point or all of them', async () => {
    const faults = new FaultPoints<'a' | 'b'>();
    faults.arm('a');
    faults.arm('b');
    faults.disarm('a');
    await expect(faults.hit('a')).resolves.toBeUndefined();
    faults.disarm();
    await expect(faults.hit('b')).resolves.toBeUndefined();
  });
});
