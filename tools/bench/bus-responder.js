"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const nats_1 = require("nats");
const bus_1 = require("@apphost/bus");
const echo_contract_1 = require("./echo.contract");
/**
 * The serving side of bus.bench.ts, in its own process: a raw NATS echo subscription and a typed BusServer
 * echo handler, each on its own connection. Prints "ready" once both have answered a request; exits on
 * SIGTERM or when the parent closes stdin (so it never outlives the benchmark).
 */
async function main() {
    const runId = process.argv[2];
    if (!runId)
        throw new Error('usage: bus-responder.ts <runId>');
    const raw = await (0, nats_1.connect)({ servers: echo_contract_1.NATS_URL, name: `bench-raw-responder-${runId}` });
    raw.subscribe((0, echo_contract_1.rawSubject)(runId), {
        queue: echo_contract_1.QUEUE_GROUP,
        callback: (err, m) => {
            if (!err)
                m.respond(m.data);
        },
    });
    const transport = await bus_1.NatsTransport.connect({ servers: echo_contract_1.NATS_URL, name: `bench-typed-responder-${runId}` });
    const contract = (0, echo_contract_1.echoContract)(runId);
    const server = new bus_1.BusServer({
        transport,
        instanceId: `bench-${runId}`,
        queueGroup: echo_contract_1.QUEUE_GROUP,
        logger: { error: (o, msg) => console.error(msg, o), warn: (o, msg) => console.error(msg, o) },
    });
    server.register(contract, (req) => req);
    server.start();
    // A round trip on each responder's own connection proves the server has registered its subscription.
    await raw.request((0, echo_contract_1.rawSubject)(runId), new Uint8Array([1]), { timeout: echo_contract_1.TIMEOUT_MS });
    await new bus_1.BusClient({ transport, defaultTimeoutMs: echo_contract_1.TIMEOUT_MS }).request(contract, (0, echo_contract_1.samplePayload)());
    process.stdout.write('ready\n');
    let stopping = false;
    const stop = () => {
        if (stopping)
            return;
        stopping = true;
        Promise.all([server.stop(1000).then(() => transport.close()), raw.drain()]).finally(() => process.exit(0));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    process.stdin.on('end', stop).resume();
}
main().catch((error) => {
    console.error('bus-responder failed:', error);
    process.exit(1);
});
//# sourceMappingURL=bus-responder.js.map