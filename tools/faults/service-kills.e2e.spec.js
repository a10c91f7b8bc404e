"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const testing_1 = require("@apphost/testing");
const services_1 = require("../plane/services");
const fault_plane_1 = require("./fault-plane");
const fault_table_1 = require("./fault-table");
const under_fault_1 = require("./under-fault");
const isFinal = (reply) => reply.status === 200 ||
    (reply.status === 504 && reply.body?.error?.details?.reason === 'EXECUTED_NOT_RECORDED');
/** SIGKILL of each of the seven service processes, idle and mid-flight; the launcher restarts it as a pod would be. */
jest.setTimeout(90_000);
describe('fault suite: SIGKILL of a service', () => {
    let plane;
    const rows = [];
    beforeAll(async () => {
        plane = await fault_plane_1.FaultPlane.start();
    }, 150_000);
    afterAll(async () => {
        (0, fault_table_1.writeFaultRows)('service-kills', rows);
        await plane?.stop();
    }, 60_000);
    it.each((0, services_1.loadServiceDefinitions)().map((d) => d.name))('SIGKILL of %s while idle', async (name) => {
        const outcome = await (0, under_fault_1.underFault)(plane, rows, `SIGKILL ${name} (idle)`, { allowedCodes: under_fault_1.FAULT_CODES, noReplyAllowed: name === 'gateway' }, async () => {
            await plane.kill(name);
            await plane.restarted(name);
        });
        expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
    });
    it('SIGKILL of governed-operations mid-batch: the retry of the same call id does not run it again', async () => {
        const sessionId = `kill-batch-${Date.now()}`;
        expect((await plane.flow.openSession(sessionId)).status).toBe(201);
        plane.sessions.add(sessionId);
        const key = `${sessionId}/inv-slow/call-1`;
        const send = () => plane.call((flow) => flow.batch(sessionId, 'inv-slow', [{ functionCallId: 'call-1', tool: 'record', arguments: { key, delayMs: 1500 } }]));
        const outcome = await (0, under_fault_1.underFault)(plane, rows, 'SIGKILL governed-operations (mid-batch)', { allowedCodes: under_fault_1.FAULT_CODES }, async () => {
            const inFlight = send();
            await (0, testing_1.eventually)(async () => plane.executions().has(key), 10_000, 20);
            await plane.kill('governed-operations');
            await inFlight;
            await plane.restarted('governed-operations');
            // The runtime retries the same invocation and call id until it gets a final answer: the recorded event (200),
            // or, as the tool ran and its run died before recording it, OUTCOME_UNKNOWN `EXECUTED_NOT_RECORDED` at once.
            await (0, testing_1.eventually)(async () => (isFinal(await send()) ? true : undefined), 30_000, 500);
        });
        expect(plane.executions().get(key)).toBe(1);
        expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
    });
    it('SIGKILL of lifecycle-store mid-create: every session asked for exists once the store is back', async () => {
        const ids = Array.from({ length: 6 }, (_, i) => `kill-create-${Date.now()}-${i}`);
        ids.forEach((id) => plane.sessions.add(id));
        // Each create carries its idempotency key (creationOperationId), as a runtime that retries does: the retry with
        // the same key completes the interrupted creation instead of waiting out the dead creator's lease.
        const opOf = (id) => `op-${id}`;
        const outcome = await (0, under_fault_1.underFault)(plane, rows, 'SIGKILL lifecycle-store (mid-create)', { allowedCodes: under_fault_1.FAULT_CODES }, async () => {
            const creates = ids.map((id) => plane.call((flow) => flow.openSession(id, opOf(id))));
            await (0, testing_1.sleep)(30);
            await plane.kill('lifecycle-store');
            await Promise.all(creates);
            await plane.restarted('lifecycle-store');
            for (const id of ids)
                await (0, testing_1.eventually)(async () => ((await plane.call((flow) => flow.openSession(id, opOf(id)))).status === 201 ? true : undefined), 30_000, 500);
        });
        for (const id of ids)
            expect((await plane.flow.request('GET', `/v1/sessions/${id}?appName=demo`)).body).toMatchObject({ sessionId: id, state: 'ACTIVE' });
        expect(outcome.lost).toEqual([]);
    });
    it('SIGKILL of sealed-result-store mid-delete: the retried delete completes the cascade', async () => {
        const ids = Array.from({ length: 4 }, (_, i) => `kill-delete-${Date.now()}-${i}`);
        for (const id of ids) {
            expect((await plane.flow.openSession(id)).status).toBe(201);
            expect((await plane.flow.batch(id, 'inv-1', [{ functionCallId: 'call-1', tool: 'get-time', arguments: {} }])).status).toBe(200);
        }
        const outcome = await (0, under_fault_1.underFault)(plane, rows, 'SIGKILL sealed-result-store (mid-delete)', { allowedCodes: under_fault_1.FAULT_CODES }, async () => {
            const deletes = ids.map((id) => plane.call((flow) => flow.deleteSession(id)));
            await (0, testing_1.sleep)(30);
            await plane.kill('sealed-result-store');
            await Promise.all(deletes);
            await plane.restarted('sealed-result-store');
            for (const id of ids)
                await (0, testing_1.eventually)(async () => ([200, 404].includes((await plane.call((flow) => flow.deleteSession(id))).status) ? true : undefined), 30_000, 500);
        });
        for (const id of ids)
            expect((await plane.flow.request('GET', `/v1/sessions/${id}?appName=demo`)).status).toBe(404);
        expect(outcome.lost).toEqual([]);
    });
});
//# sourceMappingURL=service-kills.e2e.spec.js.map