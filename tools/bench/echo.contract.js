"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.TIMEOUT_MS = exports.QUEUE_GROUP = exports.NATS_URL = void 0;
exports.newRunId = newRunId;
exports.rawSubject = rawSubject;
exports.echoContract = echoContract;
exports.samplePayload = samplePayload;
const node_crypto_1 = require("node:crypto");
const zod_1 = require("zod");
const contracts_1 = require("@apphost/contracts");
/** Shared by the requester (bus.bench.ts) and the responder (bus-responder.ts). */
exports.NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
exports.QUEUE_GROUP = 'bench-echo';
exports.TIMEOUT_MS = 10_000;
const echoSchema = zod_1.z.object({
    sessionId: zod_1.z.uuid(),
    op: zod_1.z.enum(['create', 'update', 'delete']),
    pad: zod_1.z.string().max(1024),
});
/** A random token so a run never shares subjects with tests or another run. */
function newRunId() {
    return (0, node_crypto_1.randomBytes)(4).toString('hex');
}
function rawSubject(runId) {
    return `bench.raw-echo.${runId}`;
}
function echoContract(runId) {
    return (0, contracts_1.defineContract)({ service: 'gateway', operation: `bench-echo-${runId}`, version: 1, request: echoSchema, response: echoSchema });
}
/** ~110 bytes of JSON, the size of a typical small bus request. */
function samplePayload() {
    return { sessionId: (0, node_crypto_1.randomUUID)(), op: 'create', pad: 'x'.repeat(60) };
}
//# sourceMappingURL=echo.contract.js.map