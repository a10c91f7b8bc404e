import { connect } from 'nats';
import { BusClient, encodeJson, NatsTransport } from '@apphost/bus';
import { startResponder } from './bus-hop';
import { echoContract, NATS_URL, newRunId, rawSubject, samplePayload, TIMEOUT_MS } from './echo.contract';
import { type Measurement, medianRound, positiveIntEnv, round3, runBench, runLoad } from './harness';

/**
 * `npm run bench:bus`: the typed bus (BusClient -> BusServer over NATS, zod on request and response) against raw
 * NATS request-reply, interleaved round by round in one run. See tools/bench/README.md.
 */
const ROUNDS = positiveIntEnv('BENCH_ROUNDS', 3);
const LEVELS = [
  { inflight: 1, total: positiveIntEnv('BENCH_TOTAL_1', 5000), target: 0.6 },
  { inflight: 64, total: positiveIntEnv('BENCH_TOTAL_64', 30000), target: 0.8 },
];
// raw-nats: the client as most code uses it; raw-nats-tuned: with the same `noAsyncTraces` option the bus's
// transport sets, so the ratio is reported against both and the option cannot flatter the figure.
const VARIANTS = ['raw-nats', 'raw-nats-tuned', 'typed-bus'] as const;
type Variant = (typeof VARIANTS)[number];

async function main(): Promise<void> {
  const runId = newRunId();
  const responder = await startResponder(runId);
  const raw = await connect({ servers: NATS_URL, name: `bench-raw-requester-${runId}` });
  const rawTuned = await connect({ servers: NATS_URL, name: `bench-raw-tuned-requester-${runId}`, noAsyncTraces: true });
  const transport = await NatsTransport.connect({ servers: NATS_URL, name: `bench-typed-requester-${runId}` });
  try {
    const contract = echoContract(runId);
    const client = new BusClient({ transport, defaultTimeoutMs: TIMEOUT_MS });
    const payload = samplePayload();
    const rawBytes = encodeJson(payload);
    const calls: Record<Variant, () => Promise<unknown>> = {
      'raw-nats': async () => {
        const reply = await raw.request(rawSubject(runId), rawBytes, { timeout: TIMEOUT_MS });
        if (reply.data.byteLength !== rawBytes.byteLength) throw new Error('raw echo returned a different payload');
      },
      'raw-nats-tuned': async () => {
        const reply = await rawTuned.request(rawSubject(runId), rawBytes, { timeout: TIMEOUT_MS });
        if (reply.data.byteLength !== rawBytes.byteLength) throw new Error('raw echo returned a different payload');
      },
      'typed-bus': () => client.request(contract, payload),
    };

    for (const level of LEVELS) {
      for (const v of VARIANTS) await runLoad(calls[v], Math.ceil(level.total / 5), level.inflight); // warm-up
    }
    const lines: object[] = [];
    const ratios: object[] = [];
    for (const level of LEVELS) {
      const rounds: Record<Variant, Measurement[]> = { 'raw-nats': [], 'raw-nats-tuned': [], 'typed-bus': [] };
      for (let r = 1; r <= ROUNDS; r++) {
        for (const v of VARIANTS) {
          const m = await runLoad(calls[v], level.total, level.inflight);
          rounds[v].push(m);
          process.stderr.write(`round ${r}/${ROUNDS} inflight=${level.inflight} ${v}: ${Math.round(m.ops_s)} ops/s p99 ${round3(m.p99_ms)} ms\n`);
        }
      }
      const med = Object.fromEntries(VARIANTS.map((v) => [v, medianRound(rounds[v])])) as Record<Variant, Measurement>;
      for (const v of VARIANTS) lines.push(resultLine(v, level.inflight, med[v]));
      const ratio = med['typed-bus'].ops_s / med['raw-nats'].ops_s;
      const ratioTuned = med['typed-bus'].ops_s / med['raw-nats-tuned'].ops_s;
      ratios.push({
        bench: 'bus',
        inflight: level.inflight,
        ratio_ops: round3(ratio),
        ratio_ops_vs_tuned_raw: round3(ratioTuned),
        target: level.target,
        meets_target: ratio >= level.target,
      });
    }
    for (const line of [...lines, ...ratios]) process.stdout.write(`${JSON.stringify(line)}\n`);
  } finally {
    await Promise.allSettled([raw.close(), rawTuned.close(), transport.close()]);
    responder.kill('SIGTERM');
  }
}

function resultLine(variant: Variant, inflight: number, m: Measurement): object {
  return { bench: 'bus', variant, inflight, total: m.total, ops_s: Math.round(m.ops_s), p50_ms: round3(m.p50_ms), p99_ms: round3(m.p99_ms) };
}

runBench('bench:bus', main);
