import { GovernedDecideConfirmation, GovernedRunToolBatch, type RunToolBatchResponse } from '@apphost/contracts';
import { eventually, expectAppError, PrivateServer } from '@apphost/testing';
import { principal, session, startFakePlane, type FakePlane } from '../test/fake-plane';

/**
 * A Redis restart loses pending confirmation permits (the coordination store is ephemeral). The ledger still
 * holds the `adk_request_confirmation` event, so a decision on such a permit says it was lost (DATA_LOSS,
 * `CONFIRMATION_PERMIT_LOST`), not "never issued". governed-operations runs on its own redis-server here.
 */
jest.setTimeout(45_000);

describe('governed-operations: a confirmation permit lost to a Redis restart', () => {
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

  const run = (functionCallId: string) =>
    plane.service.client.request(
      GovernedRunToolBatch,
      { principal, session, invocationId: 'inv', calls: [{ functionCallId, tool: 'guarded', arguments: { amount: 5 } }] },
      { timeoutMs: 10_000 },
    );
  const decide = (confirmationId: string) =>
    plane.service.client.request(GovernedDecideConfirmation, { principal, session, confirmationId, confirmed: true }, { timeoutMs: 10_000 });

  it('issued, then Redis restarted: DATA_LOSS (CONFIRMATION_PERMIT_LOST), nothing ran; a never-issued id stays NOT_FOUND', async () => {
    const held: RunToolBatchResponse = await run('g');
    const confirmationId = held.confirmations[0].confirmationId;

    await redis.stop('SIGKILL');
    await redis.start(); // empty: --save '' --appendonly no
    // Until the service's client has reconnected, decisions fail closed (UNAVAILABLE); then the loss is told.
    const lost = await eventually(async () => {
      const error = await expectAppError(decide(confirmationId));
      return error.code === 'UNAVAILABLE' ? undefined : error;
    }, 15_000);
    expect({ code: lost.code, reason: lost.details?.['reason'] }).toEqual({ code: 'DATA_LOSS', reason: 'CONFIRMATION_PERMIT_LOST' });
    expect(lost.details).toMatchObject({ confirmationId, eventId: held.eventId });
    expect(plane.state.log.filter((l) => l.startsWith('call:'))).toEqual([]);

    await expectAppError(decide(`cf-${'0'.repeat(32)}`), 'NOT_FOUND');
  });

  it('a permit decided before the restart stays NOT_FOUND (the ledger holds its decision)', async () => {
    const held = await run('g2');
    const confirmationId = held.confirmations[0].confirmationId;
    await decide(confirmationId);
    await redis.stop('SIGKILL');
    await redis.start();
    const error = await eventually(async () => {
      const e = await expectAppError(decide(confirmationId));
      return e.code === 'UNAVAILABLE' ? undefined : e;
    }, 15_000);
    expect(error.code).toBe('NOT_FOUND');
    expect(plane.state.log.filter((l) => l.startsWith('call:'))).toEqual(['call:guarded']);
  });
});
