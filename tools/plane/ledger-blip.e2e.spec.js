"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const contracts_1 = require("@apphost/contracts");
const testing_1 = require("@apphost/testing");
const catalog_harness_1 = require("./catalog-harness");
const tool_batches_harness_1 = require("./tool-batches-harness");
/**
 * No durable event loses its sealed result: tool batches run through the real plane while its NATS freezes for
 * 3 s (SIGSTOP), so some appends land without their reply and some commits never arrive. Then GC runs with every
 * PENDING record expired, and every descriptor of every event in the ledger must still resolve.
 */
const BATCHES = 150;
const WORKERS = 16;
const BLIP_MS = 3_000;
describe('a bus blip during tool batches', () => {
    const prefix = (0, testing_1.uniquePrefix)();
    let nats;
    let providers;
    let plane;
    let alice;
    beforeAll(async () => {
        nats = await (0, testing_1.startPrivateNats)();
        providers = await (0, testing_1.startFakeProviders)(nats.url, ['export-audit']);
        plane = await (0, tool_batches_harness_1.bootBatchPlane)(nats.url, prefix, { CATALOG_APP_TOOLSETS: JSON.stringify({ 'blip-app': [{ toolsetId: 'nonce' }] }) }, 
        // Records are collectable as soon as GC runs; store hops give up within the blip, so replies really get lost.
        { GOVERNED_SEAL_PENDING_TTL_MS: '0', BUS_TIMEOUT_MS: '1500' });
        alice = await (0, catalog_harness_1.token)('alice');
        await (0, tool_batches_harness_1.bindNonceToolset)(plane.registry);
    }, 60_000);
    afterAll(async () => {
        nats?.resume();
        await plane?.stop();
        await providers?.stop();
        await nats?.stop();
        await (0, testing_1.dropSchemasWithPrefix)(prefix);
    });
    const http = async (method, url, body) => {
        const res = await fetch(`${plane.base}${url}`, {
            method,
            headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
        });
        return res.status;
    };
    const key = (sessionId) => ({ tenant: 'acme', appName: 'blip-app', userId: 'alice', sessionId });
    async function ledgerOf(sessionId) {
        const events = [];
        let afterId = 0;
        for (let page = 0; page < 100; page++) {
            const listed = await plane.lifecycle.client.request(contracts_1.LifecycleListEvents, { session: key(sessionId), afterId, limit: 100 });
            events.push(...listed.events);
            if (listed.nextAfterId === null)
                return events;
            afterId = listed.nextAfterId;
        }
        throw new Error('ledger longer than expected');
    }
    it(`${BATCHES} batches, ${BLIP_MS} ms blip, forced GC: every event resolves every sealed result`, async () => {
        const sessions = Array.from({ length: WORKERS }, (_, i) => `blip-${i}`);
        for (const sessionId of sessions)
            expect(await http('POST', '/v1/sessions', { appName: 'blip-app', sessionId })).toBe(201);
        // One batch per session first, one at a time: each spawns its session's connection generation, so the measured
        // batches are all steady-state.
        for (const sessionId of sessions) {
            const warm = { appName: 'blip-app', invocationId: 'warm', calls: [{ tool: 'start-session', arguments: {} }] };
            expect(await http('POST', `/v1/sessions/${sessionId}/tool-batches`, warm)).toBe(200);
        }
        const statuses = [];
        let next = 0;
        const worker = async (sessionId) => {
            while (next < BATCHES) {
                const n = next++;
                const body = { appName: 'blip-app', invocationId: `inv-${n}`, calls: [{ tool: 'start-session', arguments: { label: `b${n}` } }] };
                statuses.push(await http('POST', `/v1/sessions/${sessionId}/tool-batches`, body).catch(() => 0));
            }
        };
        const running = Promise.all(sessions.map(worker));
        await new Promise((r) => setTimeout(r, 2_000)); // batches in full flow
        const startedBefore = statuses.length;
        nats.pause();
        await new Promise((r) => setTimeout(r, BLIP_MS));
        const duringBlip = statuses.length - startedBefore;
        nats.resume();
        const atResume = statuses.length;
        await running;
        const failed = statuses.filter((s) => s !== 200).length;
        const gc = await plane.sealed.client.request(contracts_1.SealedGc, {}, { timeoutMs: 20_000 });
        let descriptors = 0;
        let lost = 0;
        for (const sessionId of sessions) {
            for (const event of await ledgerOf(sessionId)) {
                for (const widget of event.widgets ?? []) {
                    if (!('sealedResultRef' in widget) || !widget.sealedResultRef)
                        continue;
                    descriptors++;
                    const resolved = await plane.sealed.client
                        .request(contracts_1.SealedResolve, {
                        key: {
                            session: key(sessionId),
                            incarnation: event.incarnation,
                            eventId: String(event.id),
                            functionCallId: widget.correlation.functionCallId,
                            recordId: widget.sealedResultRef.recordId,
                        },
                    })
                        .then(() => true, (error) => {
                        if (error instanceof contracts_1.AppHostError && error.code === 'NOT_FOUND')
                            return false;
                        throw error;
                    });
                    if (!resolved)
                        lost++;
                }
            }
        }
        // The numbers of this run, for the record (the assertions below are what the test proves).
        process.stdout.write(`ledger blip: batches=${BATCHES} before-blip=${startedBefore} answered-during-blip=${duringBlip} blip=${BLIP_MS}ms failed=${failed} descriptors=${descriptors} gc-committed=${gc.committedRecords} gc-deleted=${gc.deletedRecords} lost=${lost}\n`);
        expect(statuses).toHaveLength(BATCHES);
        // The blip landed mid-flow: batches were still to run when the bus came back. (Whether replies are lost, and so
        // how many batches fail, varies from run to run; nothing lost is what must hold either way.)
        expect(atResume).toBeLessThan(BATCHES);
        expect(descriptors).toBeGreaterThanOrEqual(WORKERS + BATCHES - failed);
        expect(lost).toBe(0);
    }, 60_000);
});
//# sourceMappingURL=ledger-blip.e2e.spec.js.map