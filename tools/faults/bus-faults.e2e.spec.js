"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const testing_1 = require("@apphost/testing");
const fault_plane_1 = require("./fault-plane");
const fault_table_1 = require("./fault-table");
const traffic_1 = require("./traffic");
const under_fault_1 = require("./under-fault");
/** NATS (the suite's own server) going away: requests fail fast and typed, and every service reconnects on its own. */
jest.setTimeout(90_000);
/** Well under the bus deadline (BUS_TIMEOUT_MS, 5 s): failing fast means not waiting for it. */
const FAIL_FAST_MS = 2_000;
describe('fault suite: NATS', () => {
    let plane;
    const rows = [];
    beforeAll(async () => {
        plane = await fault_plane_1.FaultPlane.start();
    }, 150_000);
    afterAll(async () => {
        (0, fault_table_1.writeFaultRows)('bus-faults', rows);
        await plane?.stop();
    }, 60_000);
    it('NATS stopped (idle) for 5 s, then started again: a request meanwhile fails fast with UNAVAILABLE', async () => {
        let whileDown;
        const outcome = await (0, under_fault_1.underFault)(plane, rows, 'NATS stopped (5 s, idle)', { allowedCodes: under_fault_1.FAULT_CODES }, async () => {
            await plane.nats.stop();
            const started = Date.now();
            try {
                const seen = await plane.call((flow) => flow.openSession(`nats-down-${Date.now()}`));
                whileDown = { status: seen.status, ms: Date.now() - started };
                await (0, testing_1.sleep)(Math.max(0, 5_000 - (Date.now() - started)));
            }
            finally {
                await plane.nats.start();
            }
        });
        // The bus is known to be down: the answer is "not now, retry", at once, not a timeout after the bus deadline.
        expect({ status: whileDown?.status, fast: (whileDown?.ms ?? Infinity) < FAIL_FAST_MS }).toEqual({ status: 503, fast: true });
        expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
    });
    it('NATS blip of 3 s under load', async () => {
        const outcome = await (0, under_fault_1.underFault)(plane, rows, 'NATS blip (3 s, under load)', { allowedCodes: under_fault_1.FAULT_CODES }, async () => {
            const traffic = await (0, traffic_1.startTraffic)(plane, `load-${Date.now()}`);
            await (0, testing_1.sleep)(500);
            await plane.nats.stop('SIGKILL');
            try {
                await (0, testing_1.sleep)(3_000);
            }
            finally {
                await plane.nats.start();
            }
            await (0, testing_1.sleep)(500);
            await traffic.stop();
        });
        expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
    });
});
//# sourceMappingURL=bus-faults.e2e.spec.js.map