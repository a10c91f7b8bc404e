import { RedisCoordinationStore, type CoordinationStore } from '@apphost/coordination';
import { GovernedRunToolBatch } from '@apphost/contracts';
import { expectAppError, TEST_REDIS_URL, testLogger } from '@apphost/testing';
import { CallClaims, type ClaimHolder } from '../calls/call-claims';
import { OwnerHeartbeat } from '../calls/owner-heartbeat';
import { principal, session, startFakePlane, type FakePlane } from '../test/fake-plane';
import { planCalls } from './batch-plan';
import { replayDigest } from './batch-replay';

/**
 * A duplicate finding the batch's claims held by an owner process (fake collaborators, real Redis claims): the
 * owner's liveness and the claim's start mark decide between waiting, running, and a prompt OUTCOME_UNKNOWN.
 * The owner is simulated here by writing its claims (and, for a live one, its heartbeat) in the service's store.
 */
jest.setTimeout(30_000);

describe('governed-operations: a batch claim held by another owner', () => {
  let plane: FakePlane;
  let store: CoordinationStore;
  let claims: CallClaims;

  beforeAll(async () => {
    plane = await startFakePlane();
    store = await RedisCoordinationStore.connect({ url: TEST_REDIS_URL, keyPrefix: `apphost:${plane.prefix}governed-operations:`, name: 'dead-owner-test' });
    claims = new CallClaims(store, 60_000);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await plane?.stop();
  });

  beforeEach(() => plane.reset());

  const calls = [{ functionCallId: 'w', tool: 'widget', arguments: { x: 1 } }];
  const run = (timeoutMs = 8_000) => plane.service.client.request(GovernedRunToolBatch, { principal, session, invocationId: 'inv', calls }, { timeoutMs });
  const executions = () => plane.state.log.filter((l) => l.startsWith('call:'));

  /** Claims the batch's ids as `owner` would have at admission, and marks them started if its tool had begun. */
  async function claimAs(owner: string, started: boolean): Promise<void> {
    const scope = { session, incarnation: plane.state.incarnation, invocationId: 'inv' };
    const holder: ClaimHolder = { owner, operationId: 'earlier-run' };
    const digest = replayDigest('inv', planCalls('inv', calls));
    expect(await claims.claim(scope, ['w'], digest, holder)).toEqual({ kind: 'claimed' });
    if (started) await claims.markStarted(scope, ['w'], digest, holder);
  }

  it('dead owner, a call had started: OUTCOME_UNKNOWN (EXECUTED_NOT_RECORDED) at once, and nothing runs', async () => {
    await claimAs('dead-instance.00000000', true);
    const started = Date.now();
    const error = await expectAppError(run(), 'OUTCOME_UNKNOWN', 'EXECUTED_NOT_RECORDED');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error.message).toMatch(/stopped after its tool started; its outcome was not recorded, and it is not run again/);
    expect(error.retryable).toBe(false);
    await expectAppError(run(), 'OUTCOME_UNKNOWN', 'EXECUTED_NOT_RECORDED');
    expect(executions()).toEqual([]);
  });

  it('dead owner, no call had started: the retry takes the claim over and runs the batch once', async () => {
    await claimAs('dead-instance.00000000', false);
    const first = await run();
    expect(first.functionResponses).toHaveLength(1);
    expect(await run()).toEqual(first);
    expect(executions()).toEqual(['call:widget']);
  });

  it('live owner (its heartbeat present): the duplicate still waits until its deadline, CALL_IN_FLIGHT, and nothing runs', async () => {
    const owner = new OwnerHeartbeat(store, 'live-instance', 200, testLogger('heartbeat'));
    await owner.start();
    try {
      await claimAs(owner.ownerId, true);
      const started = Date.now();
      await expectAppError(run(2_000), 'OUTCOME_UNKNOWN', 'CALL_IN_FLIGHT');
      expect(Date.now() - started).toBeGreaterThan(1_000); // it waited, past several heartbeat TTLs
      expect(executions()).toEqual([]);
    } finally {
      await owner.stop();
    }
  });

  it('live owner that dies while the duplicate waits: answered as soon as its heartbeat is gone, not at the deadline', async () => {
    const owner = new OwnerHeartbeat(store, 'dying-instance', 200, testLogger('heartbeat'));
    await owner.start();
    await claimAs(owner.ownerId, true);
    const started = Date.now();
    const answered = expectAppError(run(8_000), 'OUTCOME_UNKNOWN', 'EXECUTED_NOT_RECORDED');
    await new Promise((r) => setTimeout(r, 500));
    await owner.stop();
    await answered;
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(executions()).toEqual([]);
  });

  it('a heartbeat is alive while refreshed, and gone at once after a clean stop', async () => {
    const owner = new OwnerHeartbeat(store, 'short-lived', 100, testLogger('heartbeat'));
    await owner.start();
    await new Promise((r) => setTimeout(r, 500)); // past its 300 ms TTL: refreshes kept it
    expect(await owner.isAlive(owner.ownerId)).toBe(true);
    await owner.stop();
    expect(await owner.isAlive(owner.ownerId)).toBe(false);
  });
});
