import { AppHostError } from '@apphost/contracts';
import { McpConnection, type OpenConnectionOptions } from './connection';
import { startFixtureOverHttp } from './test-targets';

/* McpConnection over Streamable HTTP, against the libs/testing fixtures in HTTP mode. */
const SECRET = 'http-secret-value';
let gated: { url: string; stop(): Promise<void> };
let nonce: { url: string; stop(): Promise<void> };
const opened: McpConnection[] = [];

beforeAll(async () => {
  [gated, nonce] = await Promise.all([
    startFixtureOverHttp('capability-gated', { FIXTURE_HTTP_REQUIRE_HEADER: `authorization=Bearer ${SECRET}` }),
    startFixtureOverHttp('stateful-nonce'),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()));
  await Promise.all([gated?.stop(), nonce?.stop()]);
});

async function open(options: Partial<OpenConnectionOptions> & Pick<OpenConnectionOptions, 'target'>): Promise<McpConnection> {
  const connection = await McpConnection.open({
    connectionClass: 'app-safe',
    advertiseUi: false,
    connectTimeoutMs: 10_000,
    requestTimeoutMs: 10_000,
    ...options,
  });
  opened.push(connection);
  return connection;
}
const structured = (outcome: unknown) => (outcome as { result: { structuredContent: Record<string, unknown> } }).result.structuredContent;

describe('McpConnection over Streamable HTTP', () => {
  it('sends the resolved headers; the advertisement reaches the server over HTTP as over stdio', async () => {
    const headers = { authorization: `Bearer ${SECRET}` };
    const [advertising, full] = await Promise.all([
      open({ target: { kind: 'http', url: gated.url, headers }, advertiseUi: true }),
      open({ target: { kind: 'http', url: gated.url, headers }, connectionClass: 'full', advertiseUi: true }),
    ]);
    expect(advertising.pid).toBeNull();
    expect((await advertising.listTools()).items.find((t) => t.name === 'show-widget')?._meta).toEqual({
      ui: { resourceUri: 'ui://capability-gated/widget.html' },
    });
    expect((await full.listTools()).items.find((t) => t.name === 'show-widget')?._meta).toBeUndefined();
    expect(structured(await full.callTool({ name: 'observed-capabilities' }))).toMatchObject({ ui: false });
  }, 60_000);

  it('without the header the connection is refused with a typed error that never carries header values', async () => {
    const error = await McpConnection.open({
      target: { kind: 'http', url: gated.url, headers: { authorization: 'Bearer wrong-value' } },
      connectionClass: 'app-safe',
      advertiseUi: false,
      connectTimeoutMs: 10_000,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppHostError);
    expect(error).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'MCP_CONNECT_FAILED' } });
    expect((error as AppHostError).message).not.toContain('wrong-value');
  }, 30_000);

  it('each HTTP connection is its own MCP session (connection state is not shared); close is idempotent', async () => {
    const [a, b] = await Promise.all([open({ target: { kind: 'http', url: nonce.url } }), open({ target: { kind: 'http', url: nonce.url } })]);
    const minted = structured(await a.callTool({ name: 'start-session' })) as { nonce: string };
    expect(structured(await a.callTool({ name: 'follow-up', arguments: { nonce: minted.nonce } }))).toMatchObject({ ok: true });
    expect((await b.callTool({ name: 'follow-up', arguments: { nonce: minted.nonce } })) as unknown).toMatchObject({
      kind: 'complete',
      result: { isError: true },
    });
    await a.close();
    await a.close();
    expect(a.closed).toBe(true);
    await expect(a.ping()).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'CONNECTION_CLOSED' } });
  }, 60_000);
});
