import { GovernedRunToolBatch } from '@apphost/contracts';
import { deferred, expectAppError } from '@apphost/testing';
import { principal, session, startFakePlane, type FakePlane } from '../test/fake-plane';

/** `GOVERNED_DUPLICATE_IN_FLIGHT=reject`: a duplicate of a batch in flight is answered at once, and never runs. */
jest.setTimeout(30_000);

describe('governed-operations: a duplicate in flight, rejected at once', () => {
  let plane: FakePlane;

  beforeAll(async () => {
    plane = await startFakePlane({ GOVERNED_DUPLICATE_IN_FLIGHT: 'reject' });
  }, 60_000);

  afterAll(async () => {
    await plane?.stop();
  });

  const run = () =>
    plane.service.client.request(
      GovernedRunToolBatch,
      { principal, session, invocationId: 'inv', calls: [{ functionCallId: 'w', tool: 'widget' }] },
      { timeoutMs: 10_000 },
    );

  it('answers OUTCOME_UNKNOWN (CALL_IN_FLIGHT) without waiting; the first completes; a later retry gets its event', async () => {
    await plane.reset();
    const release = deferred();
    plane.state.callGate = release.promise;
    const first = run();
    for (let i = 0; i < 100 && !plane.state.log.includes('call:widget'); i++) await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    await expectAppError(run(), 'OUTCOME_UNKNOWN', 'CALL_IN_FLIGHT');
    expect(Date.now() - started).toBeLessThan(1_000);
    release.resolve();
    const answered = await first;
    expect(await run()).toEqual(answered);
    expect(plane.state.log.filter((l) => l.startsWith('call:'))).toEqual(['call:widget']);
  });
});
