import { AppHostError, GovernedDecideConfirmation, GovernedRunToolBatch } from '@apphost/contracts';
import { expectAppError } from '@apphost/testing';
import { principal, session, startFakePlane, type FakePlane, type FakeState } from '../test/fake-plane';

/**
 * The provenance of a tool batch's append: `ui-message` when its invocation consumed a View's message (the ledger's
 * finalizer then stamps `invocationOrigin: "mcp_app"`; the whole path on the real ledger is
 * `tools/plane/ui-message-provenance.e2e.spec.ts`), else `user-turn`; one lookup per batch, failing closed.
 */
describe('tool batches of an invocation that consumed a ui/message (fake collaborators on a private NATS)', () => {
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

  const run = (invocationId: string, calls: { functionCallId?: string; tool: string; arguments?: Record<string, unknown> }[]) =>
    plane.service.client.request(GovernedRunToolBatch, { principal, session, invocationId, calls }, { timeoutMs: 20_000 });

  it("appends with provenance ui-message for the consumed message's invocation (one lookup for the whole batch), user-turn for another", async () => {
    state.consumedInvocations.add('inv-continued');
    await run('inv-continued', [
      { functionCallId: 'a', tool: 'plain' },
      { functionCallId: 'b', tool: 'plain' },
      { functionCallId: 'c', tool: 'plain' },
    ]);
    expect(state.originLookups).toBe(1);
    expect(state.provenances).toEqual(['ui-message']);

    await run('inv-typed', [{ functionCallId: 'd', tool: 'plain' }]);
    expect(state.originLookups).toBe(2);
    expect(state.provenances).toEqual(['ui-message', 'user-turn']);
  });

  it("a mixed batch's rejection event carries the invocation's provenance too", async () => {
    state.consumedInvocations.add('inv-mixed');
    const res = await run('inv-mixed', [
      { functionCallId: 'a', tool: 'widget' },
      { functionCallId: 'b', tool: 'plain' },
    ]);
    expect(res.rejection).toBe('MIXED_BATCH');
    expect(state.provenances).toEqual(['ui-message']);
  });

  it("a call held for confirmation keeps the invocation's provenance: its decided event is ui-message too, an ordinary one's user-turn", async () => {
    state.consumedInvocations.add('inv-held');
    const held = await run('inv-held', [{ functionCallId: 'g', tool: 'guarded', arguments: { amount: 5 } }]);
    const typed = await run('inv-typed-held', [{ functionCallId: 'h', tool: 'guarded', arguments: { amount: 6 } }]);
    expect(state.provenances).toEqual(['ui-message', 'user-turn']);
    const decide = (confirmationId: string) =>
      plane.service.client.request(GovernedDecideConfirmation, { principal, session, confirmationId, confirmed: true }, { timeoutMs: 20_000 });
    await decide(held.confirmations[0].confirmationId);
    await decide(typed.confirmations[0].confirmationId);
    expect(state.provenances).toEqual(['ui-message', 'user-turn', 'ui-message', 'user-turn']);
    // The decision reads the provenance from the permit: no second lookup.
    expect(state.originLookups).toBe(2);
  });

  it('a lookup that fails fails the batch UNAVAILABLE (retryable) before anything ran; the retry then runs once', async () => {
    state.consumedInvocations.add('inv-retry');
    state.failures.findConsumed = new AppHostError('UNAVAILABLE', 'lifecycle-store is down');
    const error = await expectAppError(run('inv-retry', [{ functionCallId: 'a', tool: 'plain' }]), 'UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(state.log).toEqual(['get-session']);
    expect(state.calls).toEqual([]);
    expect(state.appended).toEqual([]);

    delete state.failures.findConsumed;
    const res = await run('inv-retry', [{ functionCallId: 'a', tool: 'plain' }]);
    expect(res.rejection).toBeNull();
    expect(state.provenances).toEqual(['ui-message']);
    expect(state.log.filter((l) => l === 'call:plain')).toHaveLength(1);
  });
});
