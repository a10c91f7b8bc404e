import { BusClient } from '@apphost/bus';
import { GovernedOperationsDescribe, GovernedRunToolBatch } from '@apphost/contracts';
import { bootService, connectTestTransport, eventually, expectAppError, spawnTs, TEST_REDIS_URL, waitForExit, type ServiceUnderTest } from '@apphost/testing';
import { governedOperationsService } from '../service';
import { principal, session, startFakePlane, type FakePlane } from '../test/fake-plane';

/**
 * A real governed-operations process SIGKILLed while its batch's tool runs (fake collaborators, real Redis and
 * NATS): the retry of the same ids, answered by a fresh instance, is told at once that the outcome is unknown,
 * and the tool is not run again.
 */
jest.setTimeout(45_000);

describe('governed-operations: the owner of a batch killed mid-call', () => {
  let plane: FakePlane;
  let successor: ServiceUnderTest | undefined;
  let caller: BusClient;
  let closeCaller: () => Promise<void>;

  beforeAll(async () => {
    plane = await startFakePlane();
    await plane.stopService(); // the spawned process below is the only one serving
    const transport = await connectTestTransport('caller', { natsUrl: plane.natsUrl });
    caller = new BusClient({ transport, defaultTimeoutMs: 5_000 });
    closeCaller = () => transport.close();
  }, 60_000);

  afterAll(async () => {
    await successor?.stop();
    await closeCaller?.();
    await plane?.stop();
  });

  const run = (timeoutMs: number) =>
    caller.request(GovernedRunToolBatch, { principal, session, invocationId: 'inv', calls: [{ functionCallId: 'w', tool: 'widget' }] }, { timeoutMs });
  const executions = () => plane.state.log.filter((l) => l.startsWith('call:'));

  it('the retry answers OUTCOME_UNKNOWN (EXECUTED_NOT_RECORDED) promptly; the tool ran once', async () => {
    const owner = spawnTs('apps/governed-operations/src/main.ts', {
      NATS_URL: plane.natsUrl,
      REDIS_URL: TEST_REDIS_URL,
      DATABASE_SCHEMA_PREFIX: plane.prefix,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      LOG_LEVEL: 'warn',
      GOVERNED_OWNER_HEARTBEAT_MS: '200',
    });
    try {
      await eventually(() => caller.request(GovernedOperationsDescribe, {}, { timeoutMs: 500 }), 30_000, 200);
      plane.state.callGate = new Promise(() => undefined); // the tool never returns: the owner dies mid-call
      void run(20_000).catch(() => undefined); // its reply never comes: the process dies
      await eventually(async () => executions().length === 1, 10_000, 20);
      owner.kill('SIGKILL');
      await waitForExit(owner, 5_000);
    } finally {
      if (owner.exitCode === null && owner.signalCode === null) owner.kill('SIGKILL');
    }

    successor = await bootService(governedOperationsService, plane.prefix, { NATS_URL: plane.natsUrl });
    await new Promise((r) => setTimeout(r, 700)); // the dead owner's heartbeat (3 × 200 ms) has lapsed
    const started = Date.now();
    await expectAppError(run(10_000), 'OUTCOME_UNKNOWN', 'EXECUTED_NOT_RECORDED');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(executions()).toEqual(['call:widget']);
  });
});
