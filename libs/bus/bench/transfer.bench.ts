import { randomBytes } from 'node:crypto';
import { defineContract } from '@apphost/contracts';
import { z } from 'zod';
import { BusClient, BusServer, NatsTransport } from '../src';

/**
 * Time to move one large reply (default 4.3 MB, the published PDF viewer's HTML) from a BusServer to a BusClient
 * over NATS, through the chunked transfer. `node -r ./tools/register.cjs libs/bus/bench/transfer.bench.ts [bytes] [rounds]`.
 */
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

async function main(): Promise<void> {
  const bytes = Number(process.argv[2] ?? 4.3e6);
  const rounds = Number(process.argv[3] ?? 20);
  const runId = randomBytes(4).toString('hex');
  const contract = defineContract({
    service: 'gateway',
    operation: `bench-transfer-${runId}`,
    version: 1,
    request: z.object({}).strict(),
    response: z.object({ html: z.string() }),
  });
  const html = randomBytes(Math.ceil((bytes * 3) / 4))
    .toString('base64')
    .slice(0, bytes);
  const serverTransport = await NatsTransport.connect({ servers: NATS_URL, name: `bench-transfer-server-${runId}` });
  const clientTransport = await NatsTransport.connect({ servers: NATS_URL, name: `bench-transfer-client-${runId}` });
  const server = new BusServer({
    transport: serverTransport,
    instanceId: `bench${runId}`,
    queueGroup: 'bench-transfer',
    logger: { error: (o, m) => console.error(m, o), warn: (o, m) => console.error(m, o) },
  });
  server.register(contract, () => ({ html }));
  server.start();
  await server.ready();
  const client = new BusClient({ transport: clientTransport, defaultTimeoutMs: 30_000 });
  try {
    const times: number[] = [];
    for (let i = 0; i < rounds + 3; i++) {
      const started = performance.now();
      const reply = await client.request(contract, {});
      const ms = performance.now() - started;
      if (reply.html !== html) throw new Error('reply differs');
      if (i >= 3) times.push(ms); // the first three warm up
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] * 10) / 10;
    process.stdout.write(`${JSON.stringify({ bench: 'bus-transfer', bytes, rounds, p50_ms: at(0.5), p90_ms: at(0.9), min_ms: at(0) })}\n`);
  } finally {
    await server.stop(1000);
    await Promise.all([serverTransport.close(), clientTransport.close()]);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
