import { AppHostError } from '@apphost/contracts';
import { systemClock, type Clock } from './clock';
import { MrtrBudget, MrtrFlows, stateOnlyRequestState } from './mrtr';

/** Time that moves only when the test sets it (shared libraries cannot use `ManualClock` from @apphost/testing). */
function fixedClock(start: number): Clock & { at: number } {
  const clock = { at: start, now: () => clock.at, schedule: systemClock.schedule };
  return clock;
}

function reasonOf(work: () => void): unknown {
  try {
    work();
  } catch (error) {
    if (error instanceof AppHostError) return error.details?.['reason'];
    throw error;
  }
  return 'accepted';
}

describe('MrtrFlows total time, on its clock', () => {
  it('accepts a continuation up to maxTotalMs after the first round and refuses it one millisecond later', () => {
    const clock = fixedClock(10_000);
    const flows = new MrtrFlows({ maxRounds: 4, maxTotalMs: 1000 }, clock);
    const { flowId } = flows.open('confirm', undefined, {}, 's1');
    clock.at += 600;
    expect(flows.remainingMs(flowId)).toBe(400);
    expect(reasonOf(() => flows.continue(flowId, 'confirm', 's1'))).toBe('accepted');
    // A second round does not restart the total.
    flows.open('confirm', flowId, {}, 's2');
    clock.at += 400;
    expect(reasonOf(() => flows.continue(flowId, 'confirm', 's2'))).toBe('accepted');
    expect(flows.remainingMs(flowId)).toBe(1);
    clock.at += 1;
    expect(reasonOf(() => flows.continue(flowId, 'confirm', 's2'))).toBe('INPUT_REQUIRED_TIME_EXCEEDED');
    // The expired flow is gone.
    expect(reasonOf(() => flows.continue(flowId, 'confirm', 's2'))).toBe('INPUT_REQUIRED_FLOW_UNKNOWN');
    expect(flows.size).toBe(0);
  });
});

describe('MrtrBudget', () => {
  it('counts rounds up to maxRounds and refuses the next; time is refused only past maxTotalMs', () => {
    const clock = fixedClock(0);
    const budget = new MrtrBudget({ maxRounds: 2, maxTotalMs: 100 }, clock);
    expect([budget.countRound(), budget.countRound()]).toEqual([1, 2]);
    expect(reasonOf(() => budget.countRound())).toBe('INPUT_REQUIRED_ROUNDS_EXCEEDED');
    clock.at = 100;
    expect(reasonOf(() => budget.assertTimeLeft())).toBe('accepted');
    expect(budget.remainingMs()).toBe(1);
    clock.at = 101;
    expect(reasonOf(() => budget.assertTimeLeft())).toBe('INPUT_REQUIRED_TIME_EXCEEDED');
  });
});

describe('stateOnlyRequestState (what an app-safe connection continues)', () => {
  it('returns the state of a round that carries only a requestState, byte for byte', () => {
    expect(stateOnlyRequestState({ inputRequests: {}, requestState: ' s\u0301 ' })).toBe(' s\u0301 ');
    expect(stateOnlyRequestState({ requestState: '' })).toBe('');
  });

  it('fails closed on any round that requests input, or carries no state to echo', () => {
    const elicit = { method: 'elicitation/create', params: { message: 'PIN?', requestedSchema: { type: 'object', properties: {} } } };
    for (const round of [
      { inputRequests: { pin: elicit }, requestState: 's' },
      { inputRequests: { pin: elicit } },
      { inputRequests: 'x', requestState: 's' },
      {},
    ]) {
      expect(reasonOf(() => stateOnlyRequestState(round))).toBe('INPUT_REQUIRED_DENIED');
    }
  });
});
