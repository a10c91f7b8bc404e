import { randomBytes } from 'node:crypto';
import { AppHostError, byteReferenceSchema, defineContract, type ErrorCode } from '@apphost/contracts';
import { z } from 'zod';
import { BusClient } from './bus-client';
import { encodeJson } from './codec';
import { BusServer, type BusServerOptions } from './bus-server';
import type { HandlerContext } from './handler-context';
import { HEADER_CORRELATION_ID, HEADER_DEADLINE } from './headers';
import { DEFAULT_MAX_PAYLOAD_BYTES } from './limits';
import type { BusMetrics, TransferSide } from './metrics';
import { RequestContexts } from './request-context';
import { TransportError, type BusTransport, type TransportReply, type TransportRequestOptions } from './transports/transport';
import { echoContract, inProcessFixture, natsFixture, silentLogger, sleep, type TransportFixture } from '../test/transports';

const MiB = 1024 * 1024;
const CHUNK = 512 * 1024;
/** The bytes `{"ok":true,"data":{"text":""}}` adds around an echo reply's text. */
const ECHO_REPLY_OVERHEAD = encodeJson({ ok: true, data: { text: '' } }).byteLength;

type Echo = ReturnType<typeof echoContract>;

/** `bytes` of UTF-8: random ASCII with multi-byte characters throughout, so chunk boundaries split code points. */
function bigText(bytes: number): string {
  const ascii = randomBytes(bytes).toString('base64');
  const parts: string[] = [];
  let size = 0;
  for (let at = 0; size + 1009 <= bytes; at += 1000) {
    parts.push(ascii.slice(at, at + 1000), 'é€😀');
    size += 1009;
  }
  parts.push('a'.repeat(bytes - size));
  return parts.join('');
}

async function failureOf(promise: Promise<unknown>, code: ErrorCode): Promise<AppHostError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppHostError);
  expect((error as AppHostError).code).toBe(code);
  return error as AppHostError;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(10);
  }
}

interface TransferEvent {
  subject: string;
  side: TransferSide;
  outcome: string;
  bytes: number;
}

function recordingMetrics(): BusMetrics & { transfers: TransferEvent[]; handled: string[] } {
  const transfers: TransferEvent[] = [];
  const handled: string[] = [];
  return {
    transfers,
    handled,
    observeHandled: (_subject, outcome) => handled.push(outcome),
    observeRequested: () => undefined,
    observeTransfer: (subject, side, outcome, bytes) => transfers.push({ subject, side, outcome, bytes }),
  };
}

interface ChunkRequest {
  index: number;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** Sits in front of a client's chunk reads: may delay, hold, tamper with or cut a read (the test seam). */
type ChunkTap = (request: ChunkRequest, forward: (options?: Partial<TransportRequestOptions>) => Promise<TransportReply>) => Promise<TransportReply>;

const CHUNK_SUBJECT = /\.transfer\.[^.]+\.[0-9a-f]{12}\.read-chunk\.v1$/;

function tapped(inner: BusTransport, tap?: ChunkTap): BusTransport & { chunkReads: ChunkRequest[] } {
  const transport = Object.create(inner) as BusTransport & { chunkReads: ChunkRequest[] };
  transport.chunkReads = [];
  transport.request = (subject, data, options) => {
    if (!CHUNK_SUBJECT.test(subject)) return inner.request(subject, data, options);
    const request: ChunkRequest = {
      index: (JSON.parse(Buffer.from(data).toString()) as { index: number }).index,
      headers: options.headers,
      timeoutMs: options.timeoutMs,
    };
    transport.chunkReads.push(request);
    const forward = (override: Partial<TransportRequestOptions> = {}) => inner.request(subject, data, { ...options, ...override });
    return tap ? tap(request, forward) : forward();
  };
  return transport;
}

/** A slow link: each chunk read spends `ms` on the way, out of its own timeout. */
const slowBy =
  (ms: number): ChunkTap =>
  async (request, forward) => {
    await sleep(Math.min(ms, request.timeoutMs));
    if (request.timeoutMs <= ms) throw new TransportError('timeout', 'request timed out');
    return forward({ timeoutMs: request.timeoutMs - ms });
  };

describe.each<[string, () => TransportFixture]>([
  ['nats', natsFixture],
  ['in-process', inProcessFixture],
])('chunked replies over %s', (fixtureName, makeFixture) => {
  let fixture: TransportFixture;
  let contract: Echo;
  let calls: number;
  let servers: BusServer[];
  let serverMetrics: ReturnType<typeof recordingMetrics>;
  let clientMetrics: ReturnType<typeof recordingMetrics>;

  beforeEach(() => {
    fixture = makeFixture();
    contract = echoContract();
    calls = 0;
    servers = [];
    serverMetrics = recordingMetrics();
    clientMetrics = recordingMetrics();
  });

  afterEach(async () => {
    await Promise.all(servers.map((s) => s.stop(0)));
    await fixture.closeAll();
  });

  async function serve(
    reply: (req: { text: string; n?: number }, context: HandlerContext) => Promise<{ text: string }> | { text: string },
    opts: { transfer?: BusServerOptions['transfer']; on?: Echo } = {},
  ): Promise<{ server: BusServer; transport: BusTransport }> {
    const transport = await fixture.open('server');
    // A random instance id: no other run on the shared NATS server ever shares a transfer subject with this one.
    const server = new BusServer({
      transport,
      instanceId: `t${randomBytes(4).toString('hex')}`,
      queueGroup: 'transfer-svc',
      logger: silentLogger,
      metrics: serverMetrics,
      transfer: opts.transfer,
    });
    server.register(opts.on ?? contract, async (req, context) => {
      calls++;
      return reply(req, context);
    });
    server.start();
    await server.ready();
    servers.push(server);
    return { server, transport };
  }

  async function client(tap?: ChunkTap, timeoutMs = 10_000) {
    const transport = tapped(await fixture.open('client'), tap);
    return { bus: new BusClient({ transport, defaultTimeoutMs: timeoutMs, metrics: clientMetrics }), transport };
  }

  it('moves a 4.5 MB reply byte-identical in chunks of at most 512 KiB, and frees it once read', async () => {
    const text = bigText(4.5 * 1e6);
    const { server } = await serve(() => ({ text }));
    const { bus, transport } = await client();
    const reply = await bus.request(contract, { text: 'big' });
    expect(reply.text === text).toBe(true);
    const replyBytes = encodeJson({ ok: true, data: { text } }).byteLength;
    expect(transport.chunkReads.map((r) => r.index).sort((a, b) => a - b)).toEqual(Array.from({ length: Math.ceil(replyBytes / CHUNK) }, (_, i) => i));
    expect(server.parkedTransferBytes).toBe(0);
    expect(serverMetrics.transfers).toEqual([{ subject: contract.subject, side: 'served', outcome: 'OK', bytes: replyBytes }]);
    expect(clientMetrics.transfers).toEqual([{ subject: contract.subject, side: 'fetched', outcome: 'OK', bytes: replyBytes }]);
    expect(calls).toBe(1);
  });

  it('sends a reply of exactly the payload limit as one message, and one byte more as a transfer', async () => {
    const atLimit = 'a'.repeat(DEFAULT_MAX_PAYLOAD_BYTES - ECHO_REPLY_OVERHEAD);
    await serve((req) => ({ text: req.n === 1 ? `${atLimit}b` : atLimit }));
    const { bus, transport } = await client();

    expect((await bus.request(contract, { text: 'x', n: 0 })).text).toBe(atLimit);
    expect(transport.chunkReads).toEqual([]);
    expect(serverMetrics.transfers).toEqual([]);

    expect((await bus.request(contract, { text: 'x', n: 1 })).text).toBe(`${atLimit}b`);
    expect(transport.chunkReads.map((r) => r.index)).toEqual([0, 1]);
    expect(serverMetrics.transfers).toEqual([{ subject: contract.subject, side: 'served', outcome: 'OK', bytes: DEFAULT_MAX_PAYLOAD_BYTES + 1 }]);
  });

  it('takes a handler result shaped like a transfer envelope as plain data: only the server marks a transfer', async () => {
    const open = defineContract({
      service: 'gateway',
      operation: `test-open-${randomBytes(6).toString('hex')}`,
      version: 1,
      request: z.object({}).strict(),
      response: z.record(z.string(), z.unknown()),
    });
    const lookalike = {
      transferId: '9b2f4c1e-3d5a-4e6f-8a7b-1c2d3e4f5a6b',
      totalBytes: 10,
      chunkBytes: 10,
      sha256: '0'.repeat(64),
      subject: 'apphost.transfer-svc.transfer.t1.0123456789ab.read-chunk.v1',
    };
    const transport = await fixture.open('server');
    const server = new BusServer({ transport, instanceId: `t${randomBytes(4).toString('hex')}`, queueGroup: 'transfer-svc', logger: silentLogger });
    server.register(open, () => lookalike);
    server.start();
    await server.ready();
    servers.push(server);
    const { bus, transport: clientTransport } = await client();
    await expect(bus.request(open, {})).resolves.toEqual(lookalike);
    expect(clientTransport.chunkReads).toEqual([]);
  });

  it.each<[string, (reply: TransportReply) => Uint8Array]>([
    ['a flipped byte (digest mismatch)', (reply) => reply.data.map((byte, i) => (i === 1000 ? byte ^ 0x01 : byte))],
    ['a short chunk (length mismatch)', (reply) => reply.data.slice(0, reply.data.byteLength - 1)],
  ])('refuses a reply whose chunk arrives with %s: DATA_LOSS, and the handler ran once', async (_label, tamper) => {
    await serve(() => ({ text: bigText(2 * MiB) }));
    const { bus } = await client(async (request, forward) => {
      const reply = await forward();
      return request.index === 2 ? { ...reply, data: tamper(reply) } : reply;
    });
    const error = await failureOf(bus.request(contract, { text: 'x' }), 'DATA_LOSS');
    expect(error.details).toMatchObject({ transport: 'transfer-corrupt', service: 'gateway', transferBytes: expect.any(Number) });
    expect(error.retryable).toBe(false);
    expect(JSON.stringify(error.toEnvelope())).not.toMatch(/apphost\./);
    expect(clientMetrics.transfers).toEqual([expect.objectContaining({ side: 'fetched', outcome: 'DATA_LOSS' })]);
    expect(calls).toBe(1);
  });

  it('hands bytes on by reference: a handler holds them, another client fetches them whole, once', async () => {
    const bytes = Buffer.from(bigText(1.2 * MiB));
    const { server } = await serve((_req, context) => ({ text: JSON.stringify(context.hold('document', bytes)) }));
    const reference = byteReferenceSchema.parse(JSON.parse((await (await client()).bus.request(contract, { text: 'x' })).text));
    expect(reference).toMatchObject({ totalBytes: bytes.byteLength, chunkBytes: CHUNK });
    expect(server.parkedTransferBytes).toBe(bytes.byteLength);

    const { bus: consumer, transport } = await client();
    const fetched = await consumer.fetchReference(reference);
    expect(Buffer.from(fetched).equals(bytes)).toBe(true);
    expect(transport.chunkReads).toHaveLength(Math.ceil(bytes.byteLength / CHUNK));
    expect(server.parkedTransferBytes).toBe(0);
    expect(clientMetrics.transfers).toContainEqual({ subject: 'reference', side: 'fetched', outcome: 'OK', bytes: bytes.byteLength });
    // Read whole, the bytes are gone: a second fetch is DATA_LOSS, never other bytes.
    const again = await failureOf(consumer.fetchReference(reference), 'DATA_LOSS');
    expect(again.details).toMatchObject({ transport: 'transfer-lost', refusedWith: 'NOT_FOUND' });
  });

  it('refuses held bytes that do not match their digest (DATA_LOSS), and a hold over the whole capacity (PAYLOAD_TOO_LARGE)', async () => {
    const bytes = Buffer.from(bigText(700 * 1024));
    await serve((req, context) => ({ text: JSON.stringify(context.hold('document', req.text === 'huge' ? Buffer.alloc(2 * MiB) : bytes)) }), {
      transfer: { maxParkedBytes: MiB },
    });
    const { bus } = await client();
    const reference = byteReferenceSchema.parse(JSON.parse((await bus.request(contract, { text: 'x' })).text));
    const corrupt = await failureOf(bus.fetchReference({ ...reference, sha256: 'f'.repeat(64) }), 'DATA_LOSS');
    expect(corrupt.details).toMatchObject({ transport: 'transfer-corrupt' });
    await failureOf(bus.request(contract, { text: 'huge' }), 'PAYLOAD_TOO_LARGE');
  });

  it('frees a parked reply at its TTL when nobody reads it; a read after that is DATA_LOSS', async () => {
    const ttlMs = 300;
    const { server } = await serve(() => ({ text: bigText(2 * MiB) }), { transfer: { ttlMs } });
    let parkedAtFirstRead = 0;
    let freedAt = 0;
    const { bus } = await client(async (request, forward) => {
      if (request.index === 0) {
        parkedAtFirstRead = server.parkedTransferBytes;
        await until(() => server.parkedTransferBytes === 0, 5000);
        freedAt = Date.now();
      }
      return forward();
    });
    const sentAt = Date.now();
    const error = await failureOf(bus.request(contract, { text: 'x' }), 'DATA_LOSS');
    expect(parkedAtFirstRead).toBeGreaterThan(2 * MiB);
    // Parked after the request was sent, so freed no sooner than a TTL after that.
    expect(freedAt - sentAt).toBeGreaterThanOrEqual(ttlMs - 5);
    expect(error.details).toMatchObject({ transport: 'transfer-lost', refusedWith: 'NOT_FOUND' });
    expect(serverMetrics.transfers).toEqual([expect.objectContaining({ side: 'served', outcome: 'DEADLINE_EXCEEDED', bytes: parkedAtFirstRead })]);
  });

  it('refuses a reply while the parked ones fill the cap (RESOURCE_EXHAUSTED, retryable, with a hint), and takes it once there is room', async () => {
    const { server } = await serve(() => ({ text: bigText(2 * MiB) }), { transfer: { maxParkedBytes: 3 * MiB, ttlMs: 10_000 } });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { bus: holder } = await client(async (_request, forward) => {
      await held;
      return forward();
    });
    const first = holder.request(contract, { text: 'first' });
    await until(() => server.parkedTransferBytes > 2 * MiB, 5000);

    const { bus } = await client();
    const refused = await failureOf(bus.request(contract, { text: 'second' }), 'RESOURCE_EXHAUSTED');
    expect(refused.retryable).toBe(true);
    expect(refused.details).toMatchObject({ limit: 3 * MiB, retryAfterMs: expect.any(Number) });
    expect(refused.details?.['retryAfterMs']).toBeGreaterThan(0);
    expect(refused.details?.['retryAfterMs']).toBeLessThanOrEqual(10_000);

    release();
    expect(Buffer.byteLength((await first).text)).toBe(2 * MiB);
    expect(server.parkedTransferBytes).toBe(0);
    await expect(bus.request(contract, { text: 'third' })).resolves.toEqual({ text: expect.any(String) });
    expect(serverMetrics.transfers.map((t) => t.outcome)).toEqual(['RESOURCE_EXHAUSTED', 'OK', 'OK']);
    // What the requesters saw, not what the handler returned.
    expect(serverMetrics.handled).toEqual(['OK', 'RESOURCE_EXHAUSTED', 'OK']);
    expect(calls).toBe(3);
  });

  it('moves large replies both ways through a handler that makes a nested request, under the served request correlation id and deadline', async () => {
    const inner = echoContract();
    const innerText = bigText(2 * MiB);
    await serve(() => ({ text: innerText }), { on: inner });
    const outerTransport = tapped(await fixture.open('outer'));
    const nested = new BusClient({ transport: outerTransport, defaultTimeoutMs: 10_000 });
    await serve(async () => {
      const got = await nested.request(inner, { text: 'inner' });
      return { text: `${got.text}|${got.text}` };
    });
    const { bus, transport } = await client();
    const deadline = Date.now() + 8000;
    const reply = await RequestContexts.run({ correlationId: 'nest-1', deadline }, () => bus.request(contract, { text: 'outer' }));
    expect(reply.text === `${innerText}|${innerText}`).toBe(true);
    for (const read of [...transport.chunkReads, ...outerTransport.chunkReads]) {
      expect(read.headers[HEADER_CORRELATION_ID]).toBe('nest-1');
      expect(Number(read.headers[HEADER_DEADLINE])).toBeLessThanOrEqual(deadline);
    }
    expect(outerTransport.chunkReads.length).toBeGreaterThanOrEqual(4);
    expect(transport.chunkReads.length).toBeGreaterThanOrEqual(8);
    expect(calls).toBe(2);
  });

  it('fails OUTCOME_UNKNOWN when the deadline expires mid-transfer (the operation ran once), within that deadline', async () => {
    const { server } = await serve(() => ({ text: bigText(4.5 * 1e6) }));
    // Nine chunks, four at a time, 600 ms each on the way: the last ones cannot arrive within 1.5 s.
    const { bus, transport } = await client(slowBy(600));
    const started = Date.now();
    const error = await failureOf(
      RequestContexts.run({ correlationId: 'late-1', deadline: started + 1500 }, () => bus.request(contract, { text: 'x' })),
      'OUTCOME_UNKNOWN',
    );
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1490);
    expect(elapsed).toBeLessThan(1500 + 500);
    expect(error.details).toMatchObject({ transport: 'timeout', correlationId: 'late-1', transferBytes: expect.any(Number) });
    expect(error.message).toMatch(/^gateway ran the request, but its reply of \d+ bytes did not arrive in time/);
    expect(transport.chunkReads.length).toBeGreaterThan(0);
    expect(calls).toBe(1);
    // Never read whole: the server lets it go soon after the request's deadline (long before its 30 s TTL).
    await until(() => server.parkedTransferBytes === 0, 3000);
    expect(Date.now() - started).toBeLessThan(1500 + 2000);
    expect(serverMetrics.transfers).toEqual([expect.objectContaining({ outcome: 'DEADLINE_EXCEEDED' })]);
  });

  it('fails DATA_LOSS, not UNAVAILABLE, when the server that holds the reply goes away mid-transfer (the operation ran once)', async () => {
    const { server, transport: serverTransport } = await serve(() => ({ text: bigText(3 * MiB) }));
    let firstChunkRead!: () => void;
    const firstChunk = new Promise<void>((resolve) => (firstChunkRead = resolve));
    const { bus } = await client(async (request, forward) => {
      if (request.index !== 0) {
        await firstChunk;
        return forward();
      }
      const reply = await forward();
      // The process goes: its server stops with no grace and (on NATS) its connection closes.
      await server.stop(0);
      if (fixtureName === 'nats') await serverTransport.close();
      firstChunkRead();
      return reply;
    });
    const error = await failureOf(bus.request(contract, { text: 'x' }), 'DATA_LOSS');
    expect(error.retryable).toBe(false);
    expect(error.details).toMatchObject({ transport: 'transfer-lost', cause: 'no-responders', service: 'gateway' });
    expect(error.message).toMatch(/^gateway ran the request, but its reply of \d+ bytes was lost in transfer/);
    expect(calls).toBe(1);
  });

  it('serves the replies parked before a shutdown to their requesters within the grace period', async () => {
    const text = bigText(2 * MiB);
    const { server } = await serve(() => ({ text }));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { bus } = await client(async (_request, forward) => {
      await held;
      return forward();
    });
    const reply = bus.request(contract, { text: 'x' });
    await until(() => server.parkedTransferBytes > 0, 5000);
    const stopped = server.stop(5000);
    await sleep(50);
    release();
    expect((await reply).text === text).toBe(true);
    await stopped;
    expect(server.parkedTransferBytes).toBe(0);
  });
});
