"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.startTraffic = startTraffic;
const testing_1 = require("@apphost/testing");
const MAX_ROUNDS = 200;
/**
 * Load while a fault lasts: on one session, alternating UI batches (sealed results) and recorded non-UI batches, each
 * a fresh invocation, one at a time until stopped (bounded). Every reply lands in `plane.seen`.
 */
async function startTraffic(plane, sessionId) {
    const opened = await plane.flow.openSession(sessionId);
    if (opened.status !== 201)
        throw new Error(`traffic session: ${opened.status} ${JSON.stringify(opened.body)}`);
    plane.sessions.add(sessionId);
    let stopped = false;
    const loop = (async () => {
        for (let i = 0; i < MAX_ROUNDS && !stopped; i++) {
            const invocationId = `load-${i}`;
            const call = i % 2 === 0
                ? { functionCallId: 'call-1', tool: testing_1.PUBLISHED_SERVERS.basicVanillaJs.uiTool, arguments: {} }
                : { functionCallId: 'call-1', tool: 'record', arguments: { key: `${sessionId}/${invocationId}/call-1` } };
            const seen = await plane.call((flow) => flow.batch(sessionId, invocationId, [call]));
            // A fast failure must not spin: pace the next try a little.
            if (seen.status !== 200)
                await new Promise((r) => setTimeout(r, 100));
        }
    })();
    return {
        stop: async () => {
            stopped = true;
            await loop;
        },
    };
}
//# sourceMappingURL=traffic.js.map