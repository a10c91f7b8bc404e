import { sleep } from '@apphost/testing';
import { faultSuite } from './fault-suite';
import { startTraffic } from './traffic';
import { FAULT_CODES, underFault } from './under-fault';

/** PostgreSQL (through the suite's TCP proxy) and Redis failing under load: typed errors, then recovery on its own. */
jest.setTimeout(90_000);

const FAULT_MS = 3_000;

describe('fault suite: PostgreSQL and Redis', () => {
  const suite = faultSuite('store-faults');

  /** The fault under load: traffic on a fresh session before, during and a moment after it. */
  const withLoad = (name: string, fault: () => Promise<void>) =>
    underFault(suite.plane, suite.rows, name, { allowedCodes: FAULT_CODES }, async () => {
      const traffic = await startTraffic(suite.plane, `load-${Date.now()}`);
      await sleep(500);
      await fault();
      await sleep(500);
      await traffic.stop();
    });

  it('PostgreSQL connections terminated: every pooled connection drops at once, the link stays up', async () => {
    const outcome = await withLoad('PostgreSQL connections terminated', async () => {
      suite.plane.postgres.cut();
      suite.plane.postgres.resume();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });

  it('PostgreSQL refusing connections for 3 s', async () => {
    const outcome = await withLoad('PostgreSQL refused (3 s)', async () => {
      suite.plane.postgres.cut();
      await sleep(FAULT_MS);
      suite.plane.postgres.resume();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });

  it('PostgreSQL hung for 3 s (sockets open, no bytes)', async () => {
    const outcome = await withLoad('PostgreSQL hung (3 s)', async () => {
      suite.plane.postgres.pause();
      await sleep(FAULT_MS);
      suite.plane.postgres.resume();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });

  it('Redis stopped for 3 s and started again (empty: it keeps nothing on disk)', async () => {
    const outcome = await withLoad('Redis stopped and restarted', async () => {
      await suite.plane.redis.stop();
      await sleep(FAULT_MS);
      await suite.plane.redis.start();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });
});
