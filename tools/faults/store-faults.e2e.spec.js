"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const testing_1 = require("@apphost/testing");
const fault_plane_1 = require("./fault-plane");
const fault_table_1 = require("./fault-table");
const traffic_1 = require("./traffic");
const under_fault_1 = require("./under-fault");
/** PostgreSQL (through the suite's TCP proxy) and Redis failing under load: typed errors, then recovery on its own. */
jest.setTimeout(90_000);
const FAULT_MS = 3_000;
describe('fault suite: PostgreSQL and Redis', () => {
    let plane;
    const rows = [];
    beforeAll(async () => {
        plane = await fault_plane_1.FaultPlane.start();
    }, 150_000);
    afterAll(async () => {
        (0, fault_table_1.writeFaultRows)('store-faults', rows);
        await plane?.stop();
    }, 60_000);
    /** The fault under load: traffic on a fresh session before, during and a moment after it. */
    const withLoad = (name, fault) => (0, under_fault_1.underFault)(plane, rows, name, { allowedCodes: under_fault_1.FAULT_CODES }, async () => {
        const traffic = await (0, traffic_1.startTraffic)(plane, `load-${Date.now()}`);
        await (0, testing_1.sleep)(500);
        await fault();
        await (0, testing_1.sleep)(500);
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
            await (0, testing_1.sleep)(FAULT_MS);
            plane.postgres.resume();
        });
        expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
    });
    it('PostgreSQL hung for 3 s (sockets open, no bytes)', async () => {
        const outcome = await withLoad('PostgreSQL hung (3 s)', async () => {
            plane.postgres.pause();
            await (0, testing_1.sleep)(FAULT_MS);
            plane.postgres.resume();
        });
        expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
    });
    it('Redis stopped for 3 s and started again (empty: it keeps nothing on disk)', async () => {
        const outcome = await withLoad('Redis stopped and restarted', async () => {
            await plane.redis.stop();
            await (0, testing_1.sleep)(FAULT_MS);
            await plane.redis.start();
        });
        expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
    });
});
//# sourceMappingURL=store-faults.e2e.spec.js.map