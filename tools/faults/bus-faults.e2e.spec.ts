import { sleep } from '@apphost/testing';
import { FaultPlane } from './fault-plane';
import { writeFaultRows } from './fault-table';
import type { FaultOutcome } from './invariants';
import { startTraffic } from './traffic';
import { FAULT_CODES, underFault } from './under-fault';

/** NATS (the suite's own server) going away: requests fail fast and typed, and every service reconnects on its own. */
jest.setTimeout(90_000);

describe('fault suite: NATS', () => {
  let plane: FaultPlane;
  const rows: FaultOutcome[] = [];

  beforeAll(async () => {
    plane = await FaultPlane.start();
  }, 150_000);

  afterAll(async () => {
    writeFaultRows('bus-faults', rows);
    await plane?.stop();
  }, 60_000);

  it('NATS stopped (idle) for 5 s, then started again', async () => {
    const outcome = await underFault(plane, rows, 'NATS stopped (5 s, idle)', { allowedCodes: FAULT_CODES }, async () => {
      await plane.nats.stop();
      // A request while the bus is down gets a typed answer at once, not after the HTTP deadline.
      const started = Date.now();
      const seen = await plane.call((flow) => flow.openSession(`nats-down-${Date.now()}`));
      expect({ status: seen.status, fast: Date.now() - started < 6_000 }).toEqual({ status: 503, fast: true });
      await sleep(5_000 - (Date.now() - started));
      await plane.nats.start();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });

  it('NATS blip of 3 s under load', async () => {
    const outcome = await underFault(plane, rows, 'NATS blip (3 s, under load)', { allowedCodes: FAULT_CODES }, async () => {
      const traffic = await startTraffic(plane, `load-${Date.now()}`);
      await sleep(500);
      await plane.nats.stop('SIGKILL');
      await sleep(3_000);
      await plane.nats.start();
      await sleep(500);
      await traffic.stop();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });
});
