import { GovernedRunToolBatch } from '@apphost/contracts';
import { deferred, eventually, expectAppError, PrivateServer } from '@apphost/testing';
import { principal, session, startFakePlane, type FakePlane } from '../test/fake-plane';

/**
 * The start mark of a batch's claims is written before its first call; if Redis is gone by then, no call runs
 * (fail closed: UNAVAILABLE, nothing ran) and the retry runs once Redis is back. Its own redis-server here.
 */
jest.setTimeout(30_000);

describe('governed-operations: the start mark cannot be written', () => {
  let redis: PrivateServer;
  let plane: FakePlane;

  beforeAll(async () => {
    redis = await PrivateServer.redis();
    plane = await startFakePlane({ REDIS_URL: redis.url });
  }, 60_000);

  afterAll(async () => {
    await plane?.stop();
    await redis?.stop('SIGKILL');
  });

  const run = () =>
    plane.service.client.request(
      GovernedRunToolBatch,
      { principal, session, invocationId: 'inv', calls: [{ functionCallId: 'w', tool: 'widget' }] },
      { timeoutMs: 8_000 },
    );
  const executions = () => plane.state.log.filter((l) => l.startsWith('call:'));

  it('Redis lost after the claims, before the first call: UNAVAILABLE, no tool ran; the retry runs it once', async () => {
    const admitted = deferred();
    plane.state.classifyGate = admitted.promise;
    const first = run();
    await eventually(async () => plane.state.log.includes('classify'), 5_000, 20); // the claims are taken
    await redis.stop('SIGKILL');
    admitted.resolve();
    const error = await expectAppError(first, 'UNAVAILABLE');
    expect(error.message).toBe('coordination store unavailable'); // the start mark's write, the one Redis step left
    expect(error.retryable).toBe(true);
    expect(executions()).toEqual([]);

    await redis.start();
    const answered = await eventually(() => run().catch(() => undefined), 15_000, 200);
    expect(answered.functionResponses).toHaveLength(1);
    expect(executions()).toEqual(['call:widget']);
  });
});
