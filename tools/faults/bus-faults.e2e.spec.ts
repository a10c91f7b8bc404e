import { eventually, sleep } from '@apphost/testing';
import { faultSuite } from './fault-suite';
import { startTraffic } from './traffic';
import { FAULT_CODES, underFault } from './under-fault';

/** NATS (the suite's own server) going away: requests fail fast and typed, and every service reconnects on its own. */
jest.setTimeout(90_000);

/** Well under the bus deadline (BUS_TIMEOUT_MS, 5 s): failing fast means not waiting for it. */
const FAIL_FAST_MS = 2_000;

describe('fault suite: NATS', () => {
  const suite = faultSuite('bus-faults');

  it('NATS stopped (idle) for 5 s, then started again: a request meanwhile fails fast with UNAVAILABLE', async () => {
    let whileDown: { status: number; ms: number } | undefined;
    const outcome = await underFault(suite.plane, suite.rows, 'NATS stopped (5 s, idle)', { allowedCodes: FAULT_CODES }, async () => {
      await suite.plane.nats.stop();
      const down = Date.now();
      // "Known to be down": the gateway has seen its connection close (its readiness says so). On a loaded machine
      // that takes a moment; a request sent before it is in flight on a socket the process still thinks open.
      const gateway = suite.plane.services().get('gateway');
      if (!gateway) throw new Error('the fault plane runs no gateway');
      await eventually(
        async () => ((await fetch(`http://127.0.0.1:${gateway.probePort}/readyz`).catch(() => undefined))?.status === 503 ? true : undefined),
        3_000,
        50,
      );
      const started = Date.now();
      try {
        const seen = await suite.plane.call((flow) => flow.openSession(`nats-down-${Date.now()}`));
        whileDown = { status: seen.status, ms: Date.now() - started };
        await sleep(Math.max(0, 5_000 - (Date.now() - down)));
      } finally {
        await suite.plane.nats.start();
      }
    });
    // The bus is known to be down: the answer is "not now, retry", at once, not a timeout after the bus deadline.
    expect({ status: whileDown?.status, fast: (whileDown?.ms ?? Infinity) < FAIL_FAST_MS }).toEqual({ status: 503, fast: true });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });

  it('NATS blip of 3 s under load', async () => {
    const outcome = await underFault(suite.plane, suite.rows, 'NATS blip (3 s, under load)', { allowedCodes: FAULT_CODES }, async () => {
      const traffic = await startTraffic(suite.plane, `load-${Date.now()}`);
      await sleep(500);
      await suite.plane.nats.stop('SIGKILL');
      try {
        await sleep(3_000);
      } finally {
        await suite.plane.nats.start();
      }
      await sleep(500);
      await traffic.stop();
    });
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });
});
