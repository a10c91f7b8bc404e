import { trace } from '@opentelemetry/api';
import { AppHostError } from '@apphost/contracts';
import { BusClient } from './bus-client';
import { BusConfigurationError, BusServer, type BusServerOptions } from './bus-server';
import type { HandlerContext } from './handler-context';
import { RequestContexts } from './request-context';
import type { BusTransport } from './transports/transport';
import { echoContract, inProcessFixture, natsFixture, silentLogger, sleep, type TransportFixture } from '../test/transports';

/** Counts what reaches the transport, to prove that a rejected request was never published. */
function countingTransport(inner: BusTransport): BusTransport & { published: number } {
  const counting = Object.create(inner) as BusTransport & { published: number };
  counting.published = 0;
  counting.request = (subject, data, options) => {
    counting.published++;
    return inner.request(subject, data, options);
  };
  return counting;
}

// Not the test kit's expectAppError: @apphost/testing depends on this library (importing it would be a cycle).
async function expectBusError(promise: Promise<unknown>, code: string): Promise<AppHostError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppHostError);
  expect((error as AppHostError).code).toBe(code);
  return error as AppHostError;
}

describe.each<[string, () => TransportFixture]>([
  ['nats', natsFixture],
  ['in-process', inProcessFixture],
])('bus contract over %s', (_name, makeFixture) => {
  let fixture: TransportFixture;
  let contract: ReturnType<typeof echoContract>;
  let calls: number;
  let servers: BusServer[];

  beforeEach(() => {
    fixture = makeFixture();
    contract = echoContract();
    calls = 0;
    servers = [];
  });

  afterEach(async () => {
    await Promise.all(servers.map((s) => s.stop(1000)));
    await fixture.closeAll();
  });

  async function serve(
    handler: (req: { text: string; n?: number; delayMs?: number }, ctx: HandlerContext) => unknown,
    opts: {
      instanceId?: string;
      queueGroup?: string;
      label?: string;
      classifyError?: (error: unknown) => AppHostError | undefined;
      transfer?: BusServerOptions['transfer'];
    } = {},
  ): Promise<BusServer> {
    const transport = await fixture.open(opts.label ?? 'server');
    const server = new BusServer({
      transport,
      instanceId: opts.instanceId ?? 'i1',
      queueGroup: opts.queueGroup ?? 'test-svc',
      logger: silentLogger,
      classifyError: opts.classifyError,
      transfer: opts.transfer,
    });
    server.register(contract, async (req, ctx) => {
      calls++;
      return (await handler(req, ctx)) as { text: string };
    });
    server.start();
    // Its subscription is on the NATS server before any request of the test is published (no "no responders" race).
    await server.ready();
    servers.push(server);
    return server;
  }

  async function client(timeoutMs = 2000): Promise<{ bus: BusClient; transport: BusTransport & { published: number } }> {
    const transport = countingTransport(await fixture.open('client'));
    return { bus: new BusClient({ transport, defaultTimeoutMs: timeoutMs }), transport };
  }

  it('round-trips a request and its typed reply', async () => {
    await serve((req) => ({ text: req.text.toUpperCase(), n: req.n }));
    const { bus } = await client();
    await expect(bus.request(contract, { text: 'hello', n: 7 })).resolves.toEqual({ text: 'HELLO', n: 7 });
    expect(calls).toBe(1);
  });

  it('rejects an invalid payload with the offending paths and never calls the handler', async () => {
    await serve((req) => ({ text: req.text }));
    const { bus } = await client();
    const error = await expectBusError(bus.send(contract.subject, { text: 42, extra: true, n: 1.5 }), 'INVALID_ARGUMENT');
    const paths = (error.details?.issues as { path: string }[]).map((i) => i.path).sort();
    expect(paths).toEqual(expect.arrayContaining(['text', 'n']));
    expect(JSON.stringify(error.details)).toContain('extra');
    expect(calls).toBe(0);
  });

  it('preserves a domain error code, message and details', async () => {
    await serve(() => {
      throw new AppHostError('CONFLICT', 'already exists with other bytes', { details: { recordId: 'r1' } });
    });
    const { bus } = await client();
    const error = await expectBusError(bus.request(contract, { text: 'x' }), 'CONFLICT');
    expect(error.message).toBe('already exists with other bytes');
    expect(error.details).toEqual({ recordId: 'r1' });
    expect(error.retryable).toBe(false);
  });

  it('turns an unexpected exception into INTERNAL with a correlation id and no stack', async () => {
    silentLogger.error.mockClear();
    await serve(() => {
      throw new TypeError('secret internals at /srv/app.ts:12');
    });
    const { bus } = await client();
    const error = await bus.request(contract, { text: 'x' }, { correlationId: 'corr-123' }).catch((e: AppHostError) => e);
    expect(error).toBeInstanceOf(AppHostError);
    expect((error as AppHostError).code).toBe('INTERNAL');
    expect((error as AppHostError).details).toEqual({ correlationId: 'corr-123' });
    expect(JSON.stringify((error as AppHostError).toEnvelope())).not.toMatch(/secret|app\.ts|TypeError/);
    expect(silentLogger.error).toHaveBeenCalledWith(expect.objectContaining({ correlationId: 'corr-123' }), expect.any(String));
  });

  it('refuses a handler result outside the contract at the requester: INTERNAL, the result never reaches the caller', async () => {
    await serve((req) => (req.text === 'number' ? { text: 42 } : { text: 'ok', n: 1.5 }));
    const { bus } = await client();
    const wrongType = await expectBusError(bus.request(contract, { text: 'number' }), 'INTERNAL');
    expect(wrongType.message).toMatch(/does not match its contract/);
    await expectBusError(bus.request(contract, { text: 'fraction' }), 'INTERNAL');
    expect(calls).toBe(2);
  });

  it('answers a result JSON cannot carry with INTERNAL at once, logged with its correlation id (never a timeout)', async () => {
    silentLogger.error.mockClear();
    await serve(() => ({ text: 'x', n: BigInt(1) }));
    const { bus } = await client(5000);
    const started = performance.now();
    const error = await expectBusError(bus.request(contract, { text: 'x' }, { correlationId: 'corr-bigint' }), 'INTERNAL');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error.details).toEqual({ correlationId: 'corr-bigint' });
    expect(silentLogger.error).toHaveBeenCalledWith(expect.objectContaining({ correlationId: 'corr-bigint' }), expect.any(String));
  });

  it('gives an unexpected exception the typed form its classifier finds (a lost store connection), for every handler alike', async () => {
    const lostConnection = (error: unknown) =>
      (error as { code?: unknown }).code === 'ECONNRESET' ? new AppHostError('UNAVAILABLE', 'store connection lost') : undefined;
    await serve(
      (req) => {
        throw req.text === 'lost' ? Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) : new TypeError('a bug');
      },
      { classifyError: lostConnection },
    );
    const { bus } = await client();
    const lost = await expectBusError(bus.request(contract, { text: 'lost' }), 'UNAVAILABLE');
    expect(lost).toMatchObject({ message: 'store connection lost', retryable: true });
    await expectBusError(bus.request(contract, { text: 'bug' }), 'INTERNAL');
  });

  it('reports no responders as UNAVAILABLE in under 100 ms (not executed)', async () => {
    const { bus } = await client(5000);
    const started = performance.now();
    const error = await expectBusError(bus.request(contract, { text: 'x' }), 'UNAVAILABLE');
    expect(performance.now() - started).toBeLessThan(100);
    expect(error.retryable).toBe(true);
  });

  it('reports a slow handler as OUTCOME_UNKNOWN while the handler still completes', async () => {
    let finished!: () => void;
    const handlerDone = new Promise<void>((resolve) => (finished = resolve));
    await serve(async (req) => {
      await sleep(req.delayMs ?? 0);
      finished();
      return { text: 'late' };
    });
    const { bus } = await client();
    const error = await expectBusError(bus.request(contract, { text: 'x', delayMs: 300 }, { timeoutMs: 50 }), 'OUTCOME_UNKNOWN');
    expect(error.retryable).toBe(false);
    await handlerDone;
    expect(calls).toBe(1);
  });

  it('executes each request exactly once across two replicas of one queue group (1,000 requests)', async () => {
    const executions = new Map<number, number>();
    const perReplica = [0, 0];
    for (const replica of [0, 1]) {
      await serve(
        (req) => {
          perReplica[replica]++;
          executions.set(req.n!, (executions.get(req.n!) ?? 0) + 1);
          return { text: 'ok', n: req.n };
        },
        { instanceId: `r${replica}`, label: `replica-${replica}` },
      );
    }
    const { bus } = await client();
    const replies = await Promise.all(Array.from({ length: 1000 }, (_, n) => bus.request(contract, { text: 'x', n })));
    expect(replies.map((r) => r.n)).toEqual(Array.from({ length: 1000 }, (_, n) => n));
    expect(executions.size).toBe(1000);
    expect([...executions.values()].every((count) => count === 1)).toBe(true);
    expect(perReplica[0] + perReplica[1]).toBe(1000);
    expect(perReplica[0]).toBeGreaterThan(0);
    expect(perReplica[1]).toBeGreaterThan(0);
  });

  it('refuses to start a handler without a queue group', async () => {
    const transport = await fixture.open('no-queue');
    expect(() => new BusServer({ transport, instanceId: 'i1', queueGroup: '', logger: silentLogger })).toThrow(BusConfigurationError);
    const server = new BusServer({ transport, instanceId: 'i1', queueGroup: 'svc', logger: silentLogger });
    expect(() => server.register(contract, () => ({ text: '' }), { queue: ' ' })).toThrow(BusConfigurationError);
    expect(() => new BusServer({ transport, instanceId: 'i1', queueGroup: undefined as unknown as string, logger: silentLogger })).toThrow(/queue group/);
  });

  it('rejects an over-size request with PAYLOAD_TOO_LARGE and publishes nothing', async () => {
    await serve((req) => ({ text: req.text }));
    const { bus, transport } = await client();
    const error = await expectBusError(bus.request(contract, { text: 'x'.repeat(1024 * 1024) }), 'PAYLOAD_TOO_LARGE');
    expect(error.details).toEqual(expect.objectContaining({ limit: expect.any(Number) }));
    expect(transport.published).toBe(0);
    expect(calls).toBe(0);
  });

  it('replies PAYLOAD_TOO_LARGE when the handler result exceeds what the server may hold for a chunked transfer', async () => {
    await serve(() => ({ text: 'y'.repeat(2 * 1024 * 1024) }), { transfer: { maxParkedBytes: 1024 * 1024 } });
    const { bus } = await client();
    const error = await expectBusError(bus.request(contract, { text: 'x' }), 'PAYLOAD_TOO_LARGE');
    expect(error.details).toEqual(expect.objectContaining({ limit: 1024 * 1024 }));
    expect(calls).toBe(1);
  });

  it('propagates the correlation id and deadline in headers', async () => {
    let seen: HandlerContext | undefined;
    await serve((req, ctx) => {
      seen = ctx;
      return { text: req.text };
    });
    const { bus } = await client();
    const before = Date.now();
    await bus.request(contract, { text: 'x' }, { correlationId: 'abc-1', timeoutMs: 1500 });
    expect(seen?.correlationId).toBe('abc-1');
    expect(seen?.deadline).toBeGreaterThanOrEqual(before + 1500);
    expect(seen?.deadline).toBeLessThanOrEqual(Date.now() + 1500);
  });

  it('inherits the deadline of the request being served and refuses to send once it has passed', async () => {
    await serve((req) => ({ text: req.text }));
    const { bus, transport } = await client();
    const served = { correlationId: 'p-1', deadline: Date.now() - 1 };
    await expectBusError(
      RequestContexts.run(served, () => bus.request(contract, { text: 'x' })),
      'DEADLINE_EXCEEDED',
    );
    expect(transport.published).toBe(0);
  });

  it('carries correlation id, deadline and trace of a served request into its nested requests, with no handler code', async () => {
    const inner = echoContract();
    let nested: { handler: HandlerContext; current: ReturnType<typeof RequestContexts.current> } | undefined;
    const { bus } = await client();
    const server = new BusServer({ transport: await fixture.open('nested'), instanceId: 'nested', queueGroup: 'nested-q', logger: silentLogger });
    server.register(inner, (req, handler) => {
      nested = { handler, current: RequestContexts.current() };
      return { text: req.text };
    });
    server.start();
    await server.ready();
    servers.push(server);
    let outerSpan: ReturnType<typeof RequestContexts.current> | undefined;
    await serve(async (req) => {
      outerSpan = RequestContexts.current();
      return bus.request(inner, { text: req.text });
    });
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const edgeSpan = trace.wrapSpanContext({ traceId, spanId: 'b7ad6b7169203331', traceFlags: 1 });
    const deadline = Date.now() + 3000;
    await RequestContexts.run({ correlationId: 'edge-7', deadline, span: edgeSpan }, () => bus.send(contract.subject, { text: 'hi' }, {}));
    expect(nested?.handler.correlationId).toBe('edge-7');
    expect(nested?.handler.deadline).toBeLessThanOrEqual(deadline);
    expect(nested?.current?.correlationId).toBe('edge-7');
    expect(outerSpan?.span?.spanContext().traceId).toBe(traceId);
    expect(nested?.current?.span?.spanContext().traceId).toBe(traceId);
  });

  it('routes per-instance subjects to exactly that process', async () => {
    const hits: string[] = [];
    for (const id of ['alpha', 'beta']) {
      const transport = await fixture.open(id);
      const server = new BusServer({ transport, instanceId: id, queueGroup: 'test-svc', logger: silentLogger });
      server.register(
        contract,
        () => {
          hits.push(id);
          return { text: id };
        },
        { routing: 'instance', instanceSegment: 'conn' },
      );
      server.start();
      await server.ready();
      servers.push(server);
      expect(server.subjects).toEqual([`apphost.gateway.conn.${id}.${contract.operation}.v1`]);
    }
    const { bus } = await client();
    const replies = await Promise.all(Array.from({ length: 50 }, () => bus.request(contract, { text: 'x' }, { instance: { id: 'beta', segment: 'conn' } })));
    expect(new Set(replies.map((r) => r.text))).toEqual(new Set(['beta']));
    expect(hits.filter((h) => h === 'alpha')).toHaveLength(0);
    await expectBusError(bus.request(contract, { text: 'x' }, { instance: { id: 'gamma', segment: 'conn' } }), 'UNAVAILABLE');
  });

  it('finishes in-flight requests on shutdown and then stops taking new ones', async () => {
    const server = await serve(async (req) => {
      await sleep(req.delayMs ?? 0);
      return { text: 'done' };
    });
    const { bus } = await client();
    const inflight = bus.request(contract, { text: 'x', delayMs: 300 });
    await sleep(50);
    expect(server.inflightCount).toBe(1);
    await server.stop(5000);
    await expect(inflight).resolves.toEqual({ text: 'done' });
    await expectBusError(bus.request(contract, { text: 'x' }), 'UNAVAILABLE');
  });
});
