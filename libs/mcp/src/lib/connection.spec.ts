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

  beforeAll(async () => {
    const list = await Promise.all(cases.map(([mode]) => open({ target: fixtureTarget('hostile', [`--mode=${mode}`]) })));
    cases.forEach(([mode], i) => connections.set(mode, list[i]));
  }, 60_000);

  it.each(cases)('mode %s is denied with %s', async (mode, reason) => {
    const error = await typedRejection(connections.get(mode)!.listTools(bounds));
    expect(error.details?.['reason']).toBe(reason);
  });
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
