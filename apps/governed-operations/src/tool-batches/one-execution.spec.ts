import { AppHostError, GovernedRunToolBatch } from '@apphost/contracts';
import { deferred, expectAppError } from '@apphost/testing';
import { principal, session, startFakePlane, type FakePlane, type FakeState } from '../test/fake-plane';

/**
 * One execution per call and honest outcomes (fake collaborators on a private NATS, real Redis claims): a
 * retried batch answers its own event and runs nothing again; errors say whether a tool ran.
 */
jest.setTimeout(30_000);

describe('governed-operations: one execution per call, honest outcomes', () => {
  let plane: FakePlane;
  let state: FakeState;

  beforeAll(async () => {
    plane = await startFakePlane();
    state = plane.state;
  }, 60_000);

  afterAll(async () => {
    await plane?.stop();
  });

  beforeEach(() => plane.reset());

  type Call = { functionCallId?: string; tool: string; arguments?: Record<string, unknown> };
  const run = (calls: Call[], { invocationId = 'inv', timeoutMs = 8_000 } = {}) =>
    plane.service.client.request(GovernedRunToolBatch, { principal, session, invocationId, calls }, { timeoutMs });
  const executions = () => state.log.filter((l) => l.startsWith('call:'));

  it('a retry with the same ids runs nothing again and returns the retained outcome (responses, widgets, event id)', async () => {
    const calls = [
      { functionCallId: 'w', tool: 'widget', arguments: { x: 1 } },
      { functionCallId: 'v', tool: 'widget', arguments: { x: 2 } },
    ];
    const first = await run(calls);
    const again = await run(calls);
    expect(executions()).toEqual(['call:widget', 'call:widget']);
    expect(state.appended).toHaveLength(1);
    expect(again).toEqual(first);
  });

  it('a held call retried: the same pending confirmation comes back, no second permit', async () => {
    const first = await run([{ functionCallId: 'g', tool: 'guarded', arguments: { amount: 5 } }]);
    const again = await run([{ functionCallId: 'g', tool: 'guarded', arguments: { amount: 5 } }]);
    expect(again).toEqual(first);
    expect(again.confirmations).toHaveLength(1);
    expect(state.appended).toHaveLength(1);
  });

  it('a mixed-batch rejection retried is the same rejection', async () => {
    const calls = [
      { functionCallId: 'p', tool: 'plain' },
      { functionCallId: 'w', tool: 'widget' },
    ];
    const first = await run(calls);
    expect(await run(calls)).toEqual(first);
    expect(first.rejection).toBe('MIXED_BATCH');
    expect(state.appended).toHaveLength(1);
  });

  it('different arguments under the same ids: CONFLICT, not executed (before and after the first event exists)', async () => {
    await run([{ functionCallId: 'w', tool: 'widget', arguments: { x: 1 } }]);
    await expectAppError(run([{ functionCallId: 'w', tool: 'widget', arguments: { x: 9 } }]), 'CONFLICT', 'CALL_ID_REUSED');
    expect(executions()).toEqual(['call:widget']);

    state.callGate = new Promise(() => undefined); // the first batch of a new invocation never finishes its call
    void run([{ functionCallId: 'k', tool: 'widget', arguments: { x: 1 } }], { invocationId: 'inv2' }).catch(() => undefined);
    await eventuallyLogged('call:widget', 2);
    await expectAppError(run([{ functionCallId: 'k', tool: 'widget', arguments: { x: 2 } }], { invocationId: 'inv2' }), 'CONFLICT', 'CALL_ID_REUSED');
    expect(executions()).toHaveLength(2);
  });

  it('the same ids in another invocation are another call: it runs', async () => {
    await run([{ functionCallId: 'w', tool: 'widget' }]);
    await run([{ functionCallId: 'w', tool: 'widget' }], { invocationId: 'inv-next' });
    expect(executions()).toEqual(['call:widget', 'call:widget']);
  });

  it('a duplicate while the first is in flight waits (the default) and answers the first one’s event; the tool ran once', async () => {
    const release = deferred();
    state.callGate = release.promise;
    const calls = [{ functionCallId: 'w', tool: 'widget' }];
    const first = run(calls);
    await eventuallyLogged('call:widget', 1);
    const duplicate = run(calls);
    await new Promise((r) => setTimeout(r, 300));
    release.resolve();
    const [a, b] = await Promise.all([first, duplicate]);
    expect(b).toEqual(a);
    expect(executions()).toEqual(['call:widget']);
  });

  it('a duplicate in flight past its deadline: OUTCOME_UNKNOWN (CALL_IN_FLIGHT), and it did not run the tool', async () => {
    state.callGate = new Promise(() => undefined);
    void run([{ functionCallId: 'w', tool: 'widget' }]).catch(() => undefined);
    await eventuallyLogged('call:widget', 1);
    const started = Date.now();
    await expectAppError(run([{ functionCallId: 'w', tool: 'widget' }], { timeoutMs: 2_000 }), 'OUTCOME_UNKNOWN', 'CALL_IN_FLIGHT');
    expect(Date.now() - started).toBeGreaterThan(1_000); // it waited
    expect(executions()).toEqual(['call:widget']);
  });

  it('the lifecycle-store failing after the tool ran: OUTCOME_UNKNOWN (EXECUTED_NOT_RECORDED), and a retry does not re-execute', async () => {
    state.failures.append = new AppHostError('UNAVAILABLE', 'no responder for lifecycle-store');
    const error = await expectAppError(run([{ functionCallId: 'w', tool: 'widget' }]), 'OUTCOME_UNKNOWN', 'EXECUTED_NOT_RECORDED');
    expect(error.retryable).toBe(false);
    state.failures.append = undefined;
    await expectAppError(run([{ functionCallId: 'w', tool: 'widget' }], { timeoutMs: 2_000 }), 'OUTCOME_UNKNOWN', 'CALL_IN_FLIGHT');
    expect(executions()).toEqual(['call:widget']);
  });

  it('a store failing before anything ran keeps its code (UNAVAILABLE, retryable), and the retry runs', async () => {
    state.failures.append = new AppHostError('UNAVAILABLE', 'no responder for lifecycle-store');
    // Every call is held: no tool runs before the append fails.
    const error = await expectAppError(run([{ functionCallId: 'g', tool: 'guarded' }]), 'UNAVAILABLE');
    expect(error.retryable).toBe(true);
    state.failures.append = undefined;
    await expect(run([{ functionCallId: 'g', tool: 'guarded' }])).resolves.toMatchObject({ confirmations: [{ functionCallId: 'g' }] });
  });

  it('the sealed store down at admission: UNAVAILABLE, no tool ran; the retry runs once it is back', async () => {
    state.failures.describe = new AppHostError('UNAVAILABLE', 'no responder for sealed-result-store');
    await expectAppError(run([{ functionCallId: 'w', tool: 'widget' }]), 'UNAVAILABLE');
    expect(executions()).toEqual([]);
    state.failures.describe = undefined;
    await expect(run([{ functionCallId: 'w', tool: 'widget' }])).resolves.toMatchObject({ widgets: [{ sealedResultRef: expect.anything() }] });
    expect(executions()).toEqual(['call:widget']);
  });

  it('the sealed store failing after the tool ran: sealing is retried within the deadline and succeeds once the store is back', async () => {
    Object.assign(state.failures, { create: new AppHostError('UNAVAILABLE', 'no responder for sealed-result-store'), createTimes: 3 });
    const res = await run([{ functionCallId: 'w', tool: 'widget' }]);
    expect(state.log.filter((l) => l === 'seal:w')).toHaveLength(4);
    expect(res.functionResponses[0].response).toEqual({ content: [{ type: 'text', text: 'shown' }] });
    expect(res.widgets).toHaveLength(1);
    expect(executions()).toEqual(['call:widget']);
  });

  it('the sealed store failing until the deadline: the call answers EXECUTED_NOT_SEALED (it ran), within the deadline', async () => {
    state.failures.create = new AppHostError('UNAVAILABLE', 'no responder for sealed-result-store');
    const started = Date.now();
    const res = await run([{ functionCallId: 'w', tool: 'widget' }], { timeoutMs: 4_000 });
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(state.log.filter((l) => l === 'seal:w').length).toBeGreaterThan(2);
    expect(res.functionResponses[0].response).toEqual({ error: { code: 'EXECUTED_NOT_SEALED', message: expect.stringMatching(/^The tool ran/) } });
    expect(res.widgets).toEqual([]);
  });

  it.each([
    ['a lone surrogate', { s: '\ud800' }],
    ['a lone surrogate in a key', { ['\udc00']: 1 }],
    ['an unsafe integer', { n: 1e30 }],
    ['a value nested too deep', { deep: nest(40) }],
    ['a value too big', { big: 'x'.repeat(300 * 1024) }],
  ])('%s in the arguments: INVALID_ARGUMENT (ARGUMENTS_NOT_CANONICAL), nothing executed', async (_what, args) => {
    const error = await expectAppError(
      run([
        { functionCallId: 'ok', tool: 'widget' },
        { functionCallId: 'bad', tool: 'widget', arguments: args },
      ]),
      'INVALID_ARGUMENT',
      'ARGUMENTS_NOT_CANONICAL',
    );
    expect(error.details).toMatchObject({ index: 1, functionCallId: 'bad' });
    expect(state.log).toEqual([]);
  });

  async function eventuallyLogged(entry: string, times: number): Promise<void> {
    for (let i = 0; i < 100 && state.log.filter((l) => l === entry).length < times; i++) await new Promise((r) => setTimeout(r, 20));
    expect(state.log.filter((l) => l === entry)).toHaveLength(times);
  }
});

function nest(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { v: value };
  return value;
}
