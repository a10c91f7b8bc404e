import { ConnCallTool, describeContract, RegistryAcquireGeneration, RegistryPutToolset } from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import {
  bootServices,
  dropSchemasWithPrefix,
  eventually,
  freePort,
  spawnTs,
  startPrivateNats,
  TEST_REDIS_URL,
  uniquePrefix,
  waitForExit,
  type BootedServices,
  type PrivateNats,
} from '@apphost/testing';
import { baseUrlOf, fixtureSpec, JWT_GATEWAY_ENV, token } from './catalog-harness';
import { loadServiceDefinitions } from './services';

// Seconds, not minutes: the whole point is that a dead governed-operations does not hold the caller.
jest.setTimeout(60_000);

// Room for the batch to reach its tool call (classification lists the toolset, the stdio server starts) first.
const DEADLINE_MS = 10_000;
const principal = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };

/**
 * governed-operations SIGKILLed while a batch's tool call runs: the gateway published the batch, so it cannot know
 * whether it ran, and answers OUTCOME_UNKNOWN when the request's deadline (`x-apphost-timeout-ms`) runs out, not later.
 */
describe('a governed-operations crash mid-batch', () => {
  const prefix = uniquePrefix();
  let nats: PrivateNats;
  let plane: BootedServices<'lifecycle' | 'sealed' | 'registry' | 'catalog' | 'gateway'>;
  let governed: ReturnType<typeof spawnTs>;
  let alice: string;

  beforeAll(async () => {
    nats = await startPrivateNats();
    governed = spawnTs('apps/governed-operations/src/main.ts', {
      NATS_URL: nats.url,
      REDIS_URL: TEST_REDIS_URL,
      DATABASE_SCHEMA_PREFIX: prefix,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    });
    const definitions = loadServiceDefinitions();
    const byName = (name: string) => {
      const definition = definitions.find((d) => d.name === name);
      if (!definition) throw new Error(`no service definition named ${name}`);
      return definition;
    };
    plane = await bootServices(
      prefix,
      {
        lifecycle: { definition: byName('lifecycle-store') },
        sealed: { definition: byName('sealed-result-store'), env: { SEALED_GC_INTERVAL_MS: '0' } },
        registry: { definition: byName('binding-registry'), env: { REGISTRY_ALLOW_STDIO: 'true', INSTANCE_ID: 'reg-crash' } },
        catalog: { definition: byName('catalog-policy'), env: { CATALOG_APP_TOOLSETS: JSON.stringify({ 'slow-app': [{ toolsetId: 'slow' }] }) } },
        gateway: { definition: byName('gateway'), env: JWT_GATEWAY_ENV },
      },
      { NATS_URL: nats.url },
    );
    await eventually(
      () =>
        plane.services.registry.client.request(describeContract('governed-operations'), {}, { timeoutMs: 500 }).then(
          () => true,
          () => undefined,
        ),
      30_000,
      200,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${governed.output().stderr}`);
    });
    const put = await plane.services.registry.client.request(
      RegistryPutToolset,
      { toolsetId: 'slow', spec: fixtureSpec('stateful-nonce', null) },
      { timeoutMs: 30_000 },
    );
    expect(put.status.state).toBe('MODEL_ONLY');
    alice = await token('alice');
  }, 90_000);

  afterAll(async () => {
    if (governed.exitCode === null && governed.signalCode === null) governed.kill('SIGKILL');
    await plane?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${baseUrlOf(plane.services.gateway)}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  /** How many `slow` calls the session's connection has begun (the fixture counts them per connection). */
  const slowStarted = async (): Promise<number> => {
    const handle = await plane.services.registry.client.request(RegistryAcquireGeneration, {
      toolsetId: 'slow',
      connectionClass: 'full',
      principal,
      session: { key: { tenant: 'acme', appName: 'slow-app', userId: 'alice', sessionId: 's-crash' }, incarnation: 1 },
      holder: { kind: 'view', id: 'probe-crash' },
    });
    const reply = await requestOnGeneration(plane.services.registry.client, ConnCallTool, handle, {
      callId: `probe-${Date.now()}`,
      name: 'whoami',
      arguments: {},
    });
    return (reply as unknown as { result: { structuredContent: { slowStarted: number } } }).result.structuredContent.slowStarted;
  };

  it('answers the HTTP caller with OUTCOME_UNKNOWN within the request deadline', async () => {
    expect((await post('/v1/sessions', { appName: 'slow-app', sessionId: 's-crash' })).status).toBe(201);
    const sent = performance.now();
    const pending = post(
      '/v1/sessions/s-crash/tool-batches',
      { appName: 'slow-app', invocationId: 'inv-crash', calls: [{ tool: 'slow', arguments: { ms: 30_000 } }] },
      { 'x-apphost-timeout-ms': String(DEADLINE_MS) },
    );
    await eventually(async () => ((await slowStarted()) >= 1 ? true : undefined), DEADLINE_MS - 2000, 100);
    governed.kill('SIGKILL');
    expect((await waitForExit(governed, 5000)).signal).toBe('SIGKILL');

    const res = await pending;
    const elapsedMs = performance.now() - sent;
    expect(res.status).toBe(504);
    const body = (await res.json()) as { error: { code: string; retryable: boolean; message: string } };
    expect(body.error).toMatchObject({ code: 'OUTCOME_UNKNOWN', retryable: false });
    expect(body.error.message).not.toMatch(/apphost\./);
    // Bounded by the deadline (plus scheduling slack), not by the 120 s HTTP default or the tool's 30 s.
    expect(elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(elapsedMs).toBeLessThan(DEADLINE_MS + 2000);
  });
});
