import { systemClock } from './clock';
import { McpConnection, type OpenConnectionOptions } from './connection';
import { fixtureTarget, typedRejection } from './test-targets';

const opened: McpConnection[] = [];
async function open(options: Partial<OpenConnectionOptions> & Pick<OpenConnectionOptions, 'target'>): Promise<McpConnection> {
  const connection = await McpConnection.open({
    connectionClass: 'app-safe',
    advertiseUi: false,
    connectTimeoutMs: 20_000,
    requestTimeoutMs: 10_000,
    ...options,
  });
  opened.push(connection);
  return connection;
}

const structured = (outcome: unknown) => (outcome as { result: { structuredContent: Record<string, unknown> } }).result.structuredContent;

afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()));
});

describe('McpConnection: the advertisement on the wire (capability-gated fixture)', () => {
  let advertising: McpConnection;
  let plain: McpConnection;
  let full: McpConnection;

  beforeAll(async () => {
    [advertising, plain, full] = await Promise.all([
      open({ target: fixtureTarget('capability-gated'), advertiseUi: true }),
      open({ target: fixtureTarget('capability-gated'), advertiseUi: false }),
      open({ target: fixtureTarget('capability-gated'), connectionClass: 'full', advertiseUi: true }),
    ]);
  }, 60_000);

  it('an advertising app-safe connection sees _meta.ui; the server saw the extension and no input capabilities', async () => {
    expect(advertising.advertisesUi).toBe(true);
    const { items } = await advertising.listTools();
    expect(items.find((t) => t.name === 'show-widget')?._meta).toEqual({ ui: { resourceUri: 'ui://capability-gated/widget.html' } });
    const seen = structured(await advertising.callTool({ name: 'observed-capabilities' }));
    expect(seen['ui']).toBe(true);
    const caps = seen['capabilities'] as Record<string, unknown>;
    expect(caps['sampling']).toBeUndefined();
    expect(caps['elicitation']).toBeUndefined();
    expect(caps['roots']).toBeUndefined();
  });

  it('a non-advertising app-safe connection and a full connection never see _meta.ui', async () => {
    for (const connection of [plain, full]) {
      expect(connection.advertisesUi).toBe(false);
      const { items } = await connection.listTools();
      expect(items.find((t) => t.name === 'show-widget')?._meta).toBeUndefined();
      expect(structured(await connection.callTool({ name: 'observed-capabilities' }))['ui']).toBe(false);
    }
  });

  it('reads a resource and pings', async () => {
    const read = await advertising.readResource('ui://capability-gated/widget.html');
    expect((read['contents'] as { mimeType: string }[])[0].mimeType).toBe('text/html;profile=mcp-app');
    await expect(advertising.ping()).resolves.toBeUndefined();
  });
});

describe('McpConnection: bounded discovery against the hostile fixture', () => {
  // Generous time for every mode but `slow` (whose pages take 5 s): a loaded machine must not turn a page-count
  // violation into a timeout.
  const bounds = { maxPages: 8, maxItems: 1000, maxBytes: 512 * 1024, maxTimeMs: 4000 };
  const cases: [string, string][] = [
    ['endless', 'DISCOVERY_TOO_MANY_PAGES'],
    ['repeat-cursor', 'DISCOVERY_REPEATED_CURSOR'],
    ['many-items', 'DISCOVERY_TOO_MANY_ITEMS'],
    ['oversized', 'DISCOVERY_TOO_MANY_BYTES'],
    ['slow', 'DISCOVERY_TIMEOUT'],
  ];
  const connections = new Map<string, McpConnection>();
  const connectionOf = (mode: string): McpConnection => {
    const connection = connections.get(mode);
    if (!connection) throw new Error(`no connection for mode ${mode}`);
    return connection;
  };

  beforeAll(async () => {
    const list = await Promise.all(cases.map(([mode]) => open({ target: fixtureTarget('hostile', [`--mode=${mode}`]) })));
    cases.forEach(([mode], i) => connections.set(mode, list[i]));
  }, 60_000);

  it.each(cases)('mode %s is denied with %s', async (mode, reason) => {
    const error = await typedRejection(connectionOf(mode).listTools(bounds));
    expect(error.details?.['reason']).toBe(reason);
  });

  it.each(cases)('resources and resource templates: mode %s is denied with %s, within the same bounds', async (mode, reason) => {
    const connection = connectionOf(mode);
    // `slow` pages take 5 s: a short walk budget proves the same bound without waiting for the tools case's 4 s.
    const walk = mode === 'slow' ? { ...bounds, maxTimeMs: 500 } : bounds;
    const [resources, templates] = await Promise.all([typedRejection(connection.listResources(walk)), typedRejection(connection.listResourceTemplates(walk))]);
    expect([resources.details?.['reason'], templates.details?.['reason']]).toEqual([reason, reason]);
    expect(resources.code).toBe(reason === 'DISCOVERY_TIMEOUT' ? 'DEADLINE_EXCEEDED' : 'RESOURCE_EXHAUSTED');
  });
});

describe('McpConnection: resource listings', () => {
  it('lists every resource and template as the server listed them; a server without resources lists none', async () => {
    const [nonce, hostile, toolsOnly] = await Promise.all([
      open({ target: fixtureTarget('stateful-nonce') }),
      open({ target: fixtureTarget('hostile') }),
      open({ target: fixtureTarget('hostile', ['--mode=tools-only']) }),
    ]);
    const resources = await nonce.listResources();
    expect(resources.pages).toBe(1);
    expect(resources.items.map((r) => r.uri)).toEqual(
      expect.arrayContaining(['ui://stateful-nonce/app.html', 'ui://stateful-nonce/docs/readme.txt', 'ui://stateful-nonce/docs/guide/intro.md']),
    );
    expect(resources.bytes).toBeGreaterThan(0);
    const templates = await nonce.listResourceTemplates();
    expect(templates.items.map((t) => t.uriTemplate).sort()).toEqual([
      'ui://stateful-nonce/docs/big/{bytes}',
      'ui://stateful-nonce/docs/chunks/{count}/{bytes}',
    ]);
    expect(await hostile.listResources()).toEqual({ items: [], pages: 1, bytes: expect.any(Number) });
    expect(await toolsOnly.listResources()).toEqual({ items: [], pages: 0, bytes: 0 });
    expect(await toolsOnly.listResourceTemplates()).toEqual({ items: [], pages: 0, bytes: 0 });
  }, 60_000);
});

describe('McpConnection: calls on a connection-stateful server', () => {
  let a: McpConnection;
  let b: McpConnection;

  beforeAll(async () => {
    [a, b] = await Promise.all([
      open({ target: fixtureTarget('stateful-nonce'), advertiseUi: true }),
      open({ target: fixtureTarget('stateful-nonce'), advertiseUi: true }),
    ]);
  }, 60_000);

  it('the nonce minted on one connection is valid there and unknown on another', async () => {
    const { nonce } = structured(await a.callTool({ name: 'start-session', arguments: {} })) as { nonce: string };
    expect(structured(await a.callTool({ name: 'follow-up', arguments: { nonce } }))).toMatchObject({ ok: true });
    const other = await b.callTool({ name: 'follow-up', arguments: { nonce } });
    expect(other).toMatchObject({ kind: 'complete', result: { isError: true } });
    expect(a.pid).not.toBe(b.pid);
  });

  it('reports progress, and a timed-out call is OUTCOME_UNKNOWN (never retried)', async () => {
    const progress: number[] = [];
    await a.callTool({ name: 'slow', arguments: { ms: 60, steps: 3 } }, { onProgress: (p) => progress.push(p.progress) });
    // Progress is advisory: the SDK may drop the last notification when it races the terminal response
    // (observed under load); what arrived is in order and never after the result.
    expect(progress.slice(0, 2)).toEqual([1, 2]);
    expect([
      [1, 2],
      [1, 2, 3],
    ]).toContainEqual(progress);
    const seen = progress.length;
    await new Promise((r) => setTimeout(r, 50));
    expect(progress).toHaveLength(seen);
    const error = await typedRejection(a.callTool({ name: 'slow', arguments: { ms: 2000, steps: 1 } }, { timeoutMs: 200 }));
    expect(error.code).toBe('OUTCOME_UNKNOWN');
  });

  it('cancellation aborts the call with a typed error', async () => {
    const controller = new AbortController();
    const call = a.callTool({ name: 'slow', arguments: { ms: 5000, steps: 1 } }, { signal: controller.signal });
    setTimeout(() => controller.abort('teardown'), 100);
    const error = await typedRejection(call);
    expect(error.code).toBe('FAILED_PRECONDITION');
  });

  it('close is idempotent and use after close is a typed error', async () => {
    const c = await open({ target: fixtureTarget('stateful-nonce') });
    await Promise.all([c.close(), c.close()]);
    expect(c.closed).toBe(true);
    const error = await typedRejection(c.ping());
    expect(error.details?.['reason']).toBe('CONNECTION_CLOSED');
  });
});

describe('McpConnection: input requests (2026-07-28)', () => {
  it('an app-safe call that receives an input-request round fails closed', async () => {
    const c = await open({ target: fixtureTarget('hostile'), protocol: '2026-07-28' });
    const error = await typedRejection(c.callTool({ name: 'input-required' }));
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_DENIED' } });
    const nonce = await open({ target: fixtureTarget('stateful-nonce'), protocol: '2026-07-28' });
    const refused = await typedRejection(nonce.callTool({ name: 'confirm', arguments: { action: 'deploy' } }));
    expect(refused.details?.['reason']).toBe('INPUT_REQUIRED_DENIED');
  }, 60_000);

  it('a full connection returns each round to the caller, checks the exact requestState echo, and caps rounds', async () => {
    const c = await open({
      target: fixtureTarget('stateful-nonce'),
      protocol: '2026-07-28',
      connectionClass: 'full',
      mrtr: { maxRounds: 2, maxTotalMs: 30_000 },
    });
    const first = await c.callTool({ name: 'confirm', arguments: { action: 'deploy' } });
    expect(first).toMatchObject({ kind: 'input_required', round: 1, requestState: 'state-for-deploy' });
    if (first.kind !== 'input_required') throw new Error('expected an input round');
    const mismatch = await typedRejection(
      c.callTool({ name: 'confirm', arguments: { action: 'deploy' }, continuation: { flowId: first.flowId, inputResponses: {}, requestState: 'forged' } }),
    );
    expect(mismatch.details?.['reason']).toBe('REQUEST_STATE_MISMATCH');
    const done = await c.callTool({
      name: 'confirm',
      arguments: { action: 'deploy' },
      continuation: { flowId: first.flowId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } }, requestState: first.requestState },
    });
    expect(done).toMatchObject({ kind: 'complete', result: { structuredContent: { confirmed: true, requestState: 'state-for-deploy' } } });

    const again = await c.callTool({ name: 'confirm', arguments: { action: 'x' } });
    if (again.kind !== 'input_required') throw new Error('expected an input round');
    const round2 = await c.callTool({
      name: 'confirm',
      arguments: { action: 'x' },
      continuation: { flowId: again.flowId, inputResponses: {}, requestState: again.requestState },
    });
    expect(round2).toMatchObject({ kind: 'input_required', round: 2 });
    if (round2.kind !== 'input_required') throw new Error('expected an input round');
    const capped = await typedRejection(
      c.callTool({
        name: 'confirm',
        arguments: { action: 'x' },
        continuation: { flowId: round2.flowId, inputResponses: {}, requestState: round2.requestState },
      }),
    );
    expect(capped.details?.['reason']).toBe('INPUT_REQUIRED_ROUNDS_EXCEEDED');
  }, 60_000);
});

describe('McpConnection: app-safe multi-round-trip (2026-07-28)', () => {
  interface StepperReport {
    rounds: number;
    legs: number;
    requestIds: (string | number)[];
    echoedStates: string[];
    exact: boolean[];
    inputResponseKeys: string[];
  }
  const limits = { maxRounds: 4, maxTotalMs: 30_000 };
  const stepper = (args: Record<string, unknown>) => ({ name: 'stepper', arguments: args });
  /** The clock of `timed`: it moves only when a test moves it. */
  const clock = { at: 1_000_000, now: () => clock.at, schedule: systemClock.schedule };
  let c: McpConnection;
  let timed: McpConnection;
  let shortFlows: McpConnection;
  let legacy: McpConnection;
  let full: McpConnection;
  const whoami = async (on: McpConnection = c) => structured(await on.callTool({ name: 'whoami' })) as { stepperLegs: number; cancellations: number };

  beforeAll(async () => {
    const modern = { target: fixtureTarget('stateful-nonce'), protocol: '2026-07-28' as const };
    [c, timed, shortFlows, legacy, full] = await Promise.all([
      open({ ...modern, mrtr: limits }),
      open({ ...modern, mrtr: { maxRounds: 8, maxTotalMs: 1000 }, clock }),
      open({ ...modern, mrtr: { maxRounds: 8, maxTotalMs: 1500 } }),
      open({ target: fixtureTarget('stateful-nonce'), protocol: 'legacy', mrtr: { maxRounds: 1, maxTotalMs: 30_000 } }),
      open({ ...modern, connectionClass: 'full', mrtr: limits }),
    ]);
  }, 60_000);

  it('continues state-only rounds as one call: a fresh request id per leg, each requestState echoed byte for byte, no input responses', async () => {
    const report = structured(await c.callTool(stepper({ rounds: 3 }))) as unknown as StepperReport;
    expect(report).toMatchObject({ rounds: 3, legs: 4, exact: [true, true, true], inputResponseKeys: [] });
    expect(new Set(report.requestIds).size).toBe(4);
    const flowId = /⟨(.+)⟩/.exec(report.echoedStates[0])?.[1];
    // The fixture's states are deliberately non-canonical (spacing, a decomposed accent, a tab): compared as bytes.
    expect(report.echoedStates).toEqual([1, 2, 3].map((round) => ` stepper ⟨${flowId}⟩ round=${round}/3  "e\u0301 é" \t✓ `));
    expect(structured(await c.callTool(stepper({ rounds: 0 })))).toMatchObject({ legs: 1, echoedStates: [] });
  }, 30_000);

  it('a round that requests input fails closed, whatever the rounds before it', async () => {
    const error = await typedRejection(c.callTool({ name: 'ask', arguments: { question: 'PIN?' } }));
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_DENIED' } });
    const continuation = await typedRejection(
      c.callTool({ name: 'stepper', arguments: { rounds: 1 }, continuation: { flowId: 'f', inputResponses: {}, requestState: 'x' } }),
    );
    expect(continuation.details?.['reason']).toBe('INPUT_REQUIRED_DENIED');
  }, 30_000);

  it('caps the rounds: the round past maxRounds fails and no further leg is sent', async () => {
    const before = (await whoami()).stepperLegs;
    const error = await typedRejection(c.callTool(stepper({ rounds: limits.maxRounds + 3 })));
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_ROUNDS_EXCEEDED' } });
    expect((await whoami()).stepperLegs - before).toBe(limits.maxRounds + 1);
    expect(structured(await c.callTool(stepper({ rounds: limits.maxRounds })))).toMatchObject({ legs: limits.maxRounds + 1 });
  }, 30_000);

  it('caps the total time on the connection clock: over it between legs fails before the next leg', async () => {
    // Leg 1 sleeps a second on the server; the connection's clock jumps past the cap meanwhile.
    const call = timed.callTool(stepper({ rounds: 3, delayMs: 1000, delayLeg: 1 }));
    setTimeout(() => (clock.at += 1001), 50);
    const error = await typedRejection(call);
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_TIME_EXCEEDED' } });
    expect((await whoami(timed)).stepperLegs).toBe(1);
  }, 30_000);

  it('caps the total time under a leg in flight: that leg is cancelled and the outcome is unknown', async () => {
    const error = await typedRejection(shortFlows.callTool(stepper({ rounds: 2, delayMs: 20_000, delayLeg: 2 })));
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', details: { reason: 'INPUT_REQUIRED_TIME_EXCEEDED' } });
    await eventually(async () => (await whoami(shortFlows)).cancellations === 1);
    expect((await whoami(shortFlows)).stepperLegs).toBe(2);
  }, 30_000);

  it('cancellation aborts whichever leg is running; nothing runs after it', async () => {
    const before = await whoami();
    const controller = new AbortController();
    const call = c.callTool(stepper({ rounds: 3, delayMs: 20_000, delayLeg: 2 }), { signal: controller.signal });
    await eventually(async () => (await whoami()).stepperLegs === before.stepperLegs + 2);
    controller.abort('teardown');
    const error = await typedRejection(call);
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'CANCELLED' } });
    await eventually(async () => (await whoami()).cancellations === before.cancellations + 1);
    await new Promise((r) => setTimeout(r, 200));
    expect((await whoami()).stepperLegs).toBe(before.stepperLegs + 2);
  }, 30_000);

  it('a 2025-era connection is single-round: one wire request, whatever the server runs inside it (its SDK shim)', async () => {
    expect(legacy.protocolEra).toBe('legacy');
    // The server's own shim re-runs the handler under the one request id; AppHost's round cap never sees a round.
    const report = structured(await legacy.callTool(stepper({ rounds: 2 }))) as unknown as StepperReport;
    expect(report).toMatchObject({ legs: 3, exact: [true, true] });
    expect(new Set(report.requestIds).size).toBe(1);
    // An input request cannot reach a client that declared no input capability: the server answers an error result.
    expect(await legacy.callTool({ name: 'ask', arguments: {} })).toMatchObject({ kind: 'complete', result: { isError: true } });
  }, 30_000);

  it('a full connection still hands a state-only round to its caller', async () => {
    const first = await full.callTool(stepper({ rounds: 1 }));
    expect(first).toMatchObject({ kind: 'input_required', round: 1, inputRequests: {} });
    if (first.kind !== 'input_required') throw new Error('expected an input round');
    const done = await full.callTool({
      ...stepper({ rounds: 1 }),
      continuation: { flowId: first.flowId, inputResponses: {}, requestState: first.requestState },
    });
    expect(done).toMatchObject({ kind: 'complete', result: { structuredContent: { legs: 2, exact: [true] } } });
  }, 30_000);
});

describe('McpConnection: app-safe resources/read in rounds (2026-07-28)', () => {
  const limits = { maxRounds: 4, maxTotalMs: 30_000 };
  const docs = (path: string) => `ui://stateful-nonce/docs/${path}`;
  /** The clock of `timed`: it moves only when a test moves it. */
  const clock = { at: 1_000_000, now: () => clock.at, schedule: systemClock.schedule };
  let c: McpConnection;
  let timed: McpConnection;
  const report = (read: Record<string, unknown>) => JSON.parse((read['contents'] as { text: string }[])[0].text) as Record<string, unknown>;
  const readLegs = async (on: McpConnection = c) => (structured(await on.callTool({ name: 'whoami' })) as { readLegs: number }).readLegs;

  beforeAll(async () => {
    const modern = { target: fixtureTarget('stateful-nonce'), protocol: '2026-07-28' as const };
    [c, timed] = await Promise.all([open({ ...modern, mrtr: limits }), open({ ...modern, mrtr: { maxRounds: 8, maxTotalMs: 1000 }, clock })]);
  }, 60_000);

  it('continues state-only rounds as one read: a fresh request id per leg, each requestState echoed byte for byte, no input responses', async () => {
    const read = await c.readResource(docs('stepper/3'));
    expect(read['resultType']).toBeUndefined();
    const steps = report(read) as { legs: number; requestIds: unknown[]; echoedStates: string[] };
    expect(steps).toMatchObject({ rounds: 3, legs: 4, exact: [true, true, true], inputResponseKeys: [] });
    expect(new Set(steps.requestIds).size).toBe(4);
    const flowId = /⟨(.+)⟩/.exec(steps.echoedStates[0])?.[1];
    expect(steps.echoedStates).toEqual([1, 2, 3].map((round) => ` stepper ⟨${flowId}⟩ round=${round}/3  "e\u0301 é" \t✓ `));
    expect(report(await c.readResource(docs('stepper/0')))).toMatchObject({ legs: 1, echoedStates: [] });
  }, 30_000);

  it('a read round that requests input fails closed, and no further leg is sent', async () => {
    const before = await readLegs();
    const error = await typedRejection(c.readResource(docs('ask')));
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_DENIED' } });
    expect((await readLegs()) - before).toBe(1);
  }, 30_000);

  it('caps the rounds of a read: the round past maxRounds fails and no further leg is sent', async () => {
    const before = await readLegs();
    const error = await typedRejection(c.readResource(docs('stepper/6')));
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_ROUNDS_EXCEEDED' } });
    expect((await readLegs()) - before).toBe(limits.maxRounds + 1);
  }, 30_000);

  it('caps the total time of a read on the connection clock: over it between legs fails before the next leg', async () => {
    const read = timed.readResource(docs('stepper/slow'));
    setTimeout(() => (clock.at += 1001), 50);
    const error = await typedRejection(read);
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_TIME_EXCEEDED' } });
    expect(await readLegs(timed)).toBe(1);
  }, 30_000);

  it('a full connection refuses a read that answers in rounds (it has no caller to hand them to)', async () => {
    const full = await open({ target: fixtureTarget('stateful-nonce'), protocol: '2026-07-28', connectionClass: 'full', mrtr: limits });
    const error = await typedRejection(full.readResource(docs('stepper/3')));
    expect(error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'INPUT_REQUIRED_DENIED', operation: 'resources/read' } });
    expect(await readLegs(full)).toBe(1);
  }, 30_000);
});

/** Polls until `probe` is true (test use only; libs/mcp may not import the testing kit's `eventually`). */
async function eventually(probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
