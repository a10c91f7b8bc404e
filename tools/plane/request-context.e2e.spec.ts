import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type RunToolBatchResponse } from '@apphost/contracts';
import { FAULT_POINTS, registerTracerProvider, type FaultPoints, type Tracing } from '@apphost/runtime';
import {
  captureServiceLogs,
  dropSchemasWithPrefix,
  eventually,
  sleep,
  startFakeProviders,
  startPrivateNats,
  uniquePrefix,
  type PrivateNats,
  type Stoppable,
} from '@apphost/testing';
import { token } from './catalog-harness';
import { bindNonceToolset, bootBatchPlane, type BatchPlane } from './tool-batches-harness';

/**
 * One request context from the HTTP edge through every bus hop: the caller's correlation id in every service's log
 * lines, one trace (the caller's `traceparent`) across every service, and a deadline that bounds every hop.
 */
const SERVICES_OF_A_BATCH = ['binding-registry', 'catalog-policy', 'gateway', 'governed-operations', 'lifecycle-store', 'sealed-result-store'];
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('request context across the plane', () => {
  const prefix = uniquePrefix();
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let logs: ReturnType<typeof captureServiceLogs>;
  let nats: PrivateNats;
  let providers: Stoppable;
  let plane: BatchPlane;
  let alice: string;

  const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${plane.base}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  /** Sealed reference commits settled so far (committed or failed): they run after the batch's reply. */
  const settledCommits = async (): Promise<number> =>
    ((await plane.governed.running.context.metrics.registry.getSingleMetric('apphost_governed_sealed_commits_total')?.get())?.values ?? []).reduce(
      (sum, v) => sum + v.value,
      0,
    );
  const events = async (sessionId: string) => {
    const res = await fetch(`${plane.base}/v1/sessions/${sessionId}/events?appName=ctx-app`, { headers: { authorization: `Bearer ${alice}` } });
    return ((await res.json()) as { events: unknown[] }).events;
  };

  beforeAll(async () => {
    tracing = registerTracerProvider('apphost-test', new SimpleSpanProcessor(exporter));
    logs = captureServiceLogs('debug');
    nats = await startPrivateNats();
    providers = await startFakeProviders(nats.url, ['export-audit']);
    plane = await bootBatchPlane(nats.url, prefix, { CATALOG_APP_TOOLSETS: JSON.stringify({ 'ctx-app': [{ toolsetId: 'nonce' }] }) });
    alice = await token('alice');
    await bindNonceToolset(plane.registry);
  }, 120_000);

  afterAll(async () => {
    logs?.stop();
    await plane?.stop();
    await providers?.stop();
    await nats?.stop();
    await tracing?.shutdown();
    await dropSchemasWithPrefix(prefix);
  });

  it("carries the caller's correlation id into every service's log lines and one trace across every service", async () => {
    expect((await post('/v1/sessions', { appName: 'ctx-app', sessionId: 'ctx-1' })).status).toBe(201);
    exporter.reset();
    const commitsBefore = await settledCommits();
    // Held, so the commit surely lands after the reply: the trace must still come out whole.
    plane.governed.running.app.get<FaultPoints>(FAULT_POINTS).arm('batch.before-commit', () => sleep(300));
    const correlationId = 'ctx-e2e-batch-1';
    const res = await post(
      '/v1/sessions/ctx-1/tool-batches',
      { appName: 'ctx-app', invocationId: 'inv-ctx', calls: [{ functionCallId: 'c1', tool: 'start-session', arguments: {} }] },
      { 'x-correlation-id': correlationId, traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('x-correlation-id')).toBe(correlationId);
    expect((res.body as unknown as RunToolBatchResponse).widgets).toHaveLength(1);

    const logged = logs.lines.filter((line) => line.correlationId === correlationId);
    expect([...new Set(logged.map((line) => line.service))].sort()).toEqual(SERVICES_OF_A_BATCH);
    expect(logged.every((line) => line.traceId === TRACE_ID)).toBe(true);

    // The gateway's server span ends when the response is written. The batch's sealed reference commit runs after
    // the reply, in the same trace: its spans have ended once the commit has settled.
    await eventually(async () => (await settledCommits()) > commitsBefore, 10_000);
    const spans = exporter.getFinishedSpans();
    const ours = spans.filter((s) => s.spanContext().traceId === TRACE_ID);
    expect(ours.length).toBe(spans.length); // nothing of this batch started a trace of its own
    expect([...new Set(ours.map((s) => s.attributes['apphost.service']))].sort()).toEqual(SERVICES_OF_A_BATCH);
    const ids = new Set(ours.map((s) => s.spanContext().spanId));
    const root = ours.filter((s) => !ids.has(s.parentSpanContext?.spanId ?? ''));
    expect(root.map((s) => [s.name, s.parentSpanContext?.spanId])).toEqual([['HTTP POST /v1/sessions/:sessionId/tool-batches', '00f067aa0ba902b7']]);
    expect(ours.map((s) => s.name)).toContain('bus handle apphost.sealed-result-store.commit.v1');
    expect(ours.filter((s) => s.name.startsWith('bus handle ')).length).toBeGreaterThanOrEqual(SERVICES_OF_A_BATCH.length - 1);
  }, 60_000);

  it('bounds every hop by the caller deadline: once it has passed, the next hop is refused and nothing is appended', async () => {
    expect((await post('/v1/sessions', { appName: 'ctx-app', sessionId: 'ctx-2' })).status).toBe(201);
    let held: Promise<void> | undefined;
    plane.governed.running.app.get<FaultPoints>(FAULT_POINTS).arm('batch.before-append', () => (held = sleep(2_500)));
    const started = Date.now();
    const res = await post(
      '/v1/sessions/ctx-2/tool-batches',
      { appName: 'ctx-app', invocationId: 'inv-late', calls: [{ functionCallId: 'late', tool: 'start-session', arguments: {} }] },
      { 'x-correlation-id': 'ctx-e2e-late', 'x-apphost-timeout-ms': '1500' },
    );
    // The gateway gave up at the caller's deadline, not after its own configured 120 s.
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ error: { code: 'OUTCOME_UNKNOWN' } });
    expect(Date.now() - started).toBeLessThan(2_400);
    await held;
    // governed-operations went on past the deadline: its append was refused before it was sent.
    await sleep(300);
    const refused = logs.lines.filter(
      (l) => l.correlationId === 'ctx-e2e-late' && l.service === 'lifecycle-store' && String(l.subject ?? '').includes('append'),
    );
    expect(refused).toEqual([]);
    expect(await events('ctx-2')).toEqual([]);
  }, 60_000);

  it('refuses a malformed caller timeout before anything runs', async () => {
    const res = await post('/v1/sessions', { appName: 'ctx-app', sessionId: 'ctx-3' }, { 'x-apphost-timeout-ms': 'soon' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'INVALID_ARGUMENT', details: { header: 'x-apphost-timeout-ms' } } });
    expect((await post('/v1/sessions', { appName: 'ctx-app', sessionId: 'ctx-3' })).status).toBe(201); // it was not created by the refused one
  }, 30_000);
});
