import { connect } from 'nats';
import { BusClient, BusServer, NatsTransport } from '@apphost/bus';
import { echoContract, NATS_URL, QUEUE_GROUP, rawSubject, samplePayload, TIMEOUT_MS } from './echo.contract';

/**
 * The serving side of bus.bench.ts, in its own process: a raw NATS echo subscription and a typed BusServer
 * echo handler, each on its own connection. Prints "ready" once both have answered a request; exits on
 * SIGTERM or when the parent closes stdin (so it never outlives the benchmark).
 */
async function main(): Promise<void> {
  const runId = process.argv[2];
  if (!runId) throw new Error('usage: bus-responder.ts <runId>');

  const raw = await connect({ servers: NATS_URL, name: `bench-raw-responder-${runId}` });
  raw.subscribe(rawSubject(runId), {
    queue: QUEUE_GROUP,
    callback: (err, m) => {
      if (!err) m.respond(m.data);
    },
  });

  const transport = await NatsTransport.connect({ servers: NATS_URL, name: `bench-typed-responder-${runId}` });
  const contract = echoContract(runId);
  const server = new BusServer({
    transport,
    instanceId: `bench-${runId}`,
    queueGroup: QUEUE_GROUP,
    logger: { error: (o, msg) => console.error(msg, o), warn: (o, msg) => console.error(msg, o) },
  });
  server.register(contract, (req) => req);
  server.start();

  // A round trip on each responder's own connection proves the server has registered its subscription.
  await raw.request(rawSubject(runId), new Uint8Array([1]), { timeout: TIMEOUT_MS });
  await new BusClient({ transport, defaultTimeoutMs: TIMEOUT_MS }).request(contract, samplePayload());
  process.stdout.write('ready\n');

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    Promise.all([server.stop(1000).then(() => transport.close()), raw.drain()]).finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop).resume();
}

main().catch((error: unknown) => {
  console.error('bus-responder failed:', error);
  process.exit(1);
});
