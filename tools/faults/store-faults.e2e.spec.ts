import { sleep } from '@apphost/testing';
import { FaultPlane } from './fault-plane';
import { writeFaultRows } from './fault-table';
import type { FaultOutcome } from './invariants';
import { startTraffic } from './traffic';
import { FAULT_CODES, underFault } from './under-fault';

/** PostgreSQL (through the suite's TCP proxy) and Redis failing under load: typed errors, then recovery on its own. */
jest.setTimeout(90_000);

const FAULT_MS = 3_000;

describe('fault suite: PostgreSQL and Redis', () => {
  let plane: FaultPlane;
  const rows: FaultOutcome[] = [];

  beforeAll(async () => {
    plane = await FaultPlane.start();
  }, 150_000);

  afterAll(async () => {
    writeFaultRows('store-faults', rows);
    await plane?.stop();
  }, 60_000);

  /** The fault under load: traffic on a fresh session before, during and a moment after it. */
  const withLoad = (name: string, fault: () => Promise<void>) =>
    underFault(plane, rows, name, { allowedCodes: FAULT_CODES }, async () => {
      const traffic = await startTraffic(plane, `load-${Date.now()}`);
      await sleep(500);
      await fault();
      await sleep(500);
      await traffic.stop();
    });

  it('PostgreSQL connections terminated: every pooled connection drops at once, the link stays up', async () => {
    const outcome = await withLoad('PostgreSQL connections terminated', async () => {
      plane.postgres.cut();
      plane.postgres.resume();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });

  it('PostgreSQL refusing connections for 3 s', async () => {
    const outcome = await withLoad('PostgreSQL refused (3 s)', async () => {
      plane.postgres.cut();
      await sleep(FAULT_MS);
      plane.postgres.resume();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });

  it('PostgreSQL hung for 3 s (sockets open, no bytes)', async () => {
    const outcome = await withLoad('PostgreSQL hung (3 s)', async () => {
      plane.postgres.pause();
      await sleep(FAULT_MS);
      plane.postgres.resume();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });

  it('Redis stopped for 3 s and started again (empty: it keeps nothing on disk)', async () => {
    const outcome = await withLoad('Redis stopped and restarted', async () => {
      await plane.redis.stop();
      await sleep(FAULT_MS);
      await plane.redis.start();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });
});
