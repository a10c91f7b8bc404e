import { BusClient, type NatsTransport } from '@apphost/bus';
import { LifecycleCreateSession, LifecycleGetSession } from '@apphost/contracts';
import {
  backendsOf,
  connectTestTransport,
  dropSchemasWithPrefix,
  eventually,
  expectAppError,
  freePort,
  latch,
  lockTable,
  spawnTs,
  uniquePrefix,
  waitForExit,
  startTcpProxy,
  storeApplicationName,
  TEST_DATABASE_URL,
  terminateBackends,
  type TcpProxy,
} from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';

// Real PostgreSQL, real NATS: every fault here is seconds, not minutes.
jest.setTimeout(30_000);

describe('lifecycle-store when PostgreSQL drops or refuses its connections', () => {
  describe('a backend terminated inside a transaction', () => {
    const h = new LifecycleHarness({ name: 'postgres', url: TEST_DATABASE_URL });

    beforeAll(() => h.start(), 60_000);
    afterEach(() => h.faults.disarm());
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    it('fails the in-flight creation UNAVAILABLE (retryable), the process keeps serving, and the retry creates the session', async () => {
      const key = h.key();
      // Holds the session commit open: its backend sits idle in a transaction, the moment a failover's FATAL
      // arrives with no query to fail (the case that used to be an unhandled 'error' event).
      const inside = latch();
      h.faults.arm('create.inside-session-commit', inside.action);
      const creating = h.client.request(LifecycleCreateSession, { session: key, creationOperationId: 'op-1' });
      await inside.reached;
      const name = storeApplicationName('lifecycle-store', h.schema);
      const held = await eventually(async () => {
        const idle = (await backendsOf(name)).filter((b) => b.state === 'idle in transaction');
        return idle.length > 0 ? idle : undefined;
      }, 5_000);
      await terminateBackends(held.map((b) => b.pid));
      inside.release();

      const failure = await expectAppError(creating, 'UNAVAILABLE');
      expect(failure.retryable).toBe(true);
      expect(failure.details).toMatchObject({ phase: 'transaction', pgCode: '57P01' });
      // Nothing of the commit survived; the same operation now completes on a fresh connection.
      expect(await h.sessionRows(key)).toEqual([]);
      await expect(h.client.request(LifecycleCreateSession, { session: key, creationOperationId: 'op-1' })).resolves.toMatchObject({
        incarnation: 1,
        state: 'ACTIVE',
      });
    });
  });

  describe('PostgreSQL behind a link the test cuts or hangs', () => {
    let proxy: TcpProxy;
    let h: LifecycleHarness;

    beforeAll(async () => {
      const upstream = new URL(TEST_DATABASE_URL);
      proxy = await startTcpProxy(upstream.hostname, Number(upstream.port || 5432));
      upstream.host = `127.0.0.1:${proxy.port}`;
      h = new LifecycleHarness({ name: 'postgres', url: upstream.toString() }, { STORE_PING_TIMEOUT_MS: '300' });
      await h.start();
    }, 60_000);
    afterEach(() => proxy.resume());
    afterAll(async () => {
      await h?.stop();
      await h?.cleanup();
      await proxy?.close();
    });

    it('refused connections: a request fails UNAVAILABLE (retryable), not INTERNAL, and the next one after recovery succeeds', async () => {
      const key = h.key();
      proxy.cut();
      const refused = await expectAppError(h.client.request(LifecycleCreateSession, { session: key, creationOperationId: 'op-r' }), 'UNAVAILABLE');
      expect(refused.retryable).toBe(true);
      const read = await expectAppError(h.client.request(LifecycleGetSession, { session: key }), 'UNAVAILABLE');
      expect(read.retryable).toBe(true);

      proxy.resume();
      await expect(h.client.request(LifecycleCreateSession, { session: key, creationOperationId: 'op-r' })).resolves.toMatchObject({ state: 'ACTIVE' });
    });

    it('a hung server: /readyz answers not-ready within the ping bound, and ready again once it answers', async () => {
      const readyz = `${h.service.running.url}/readyz`;
      expect((await fetch(readyz)).status).toBe(200);
      proxy.pause();
      const started = Date.now();
      const hung = await fetch(readyz, { signal: AbortSignal.timeout(2_000) });
      const tookMs = Date.now() - started;
      expect(hung.status).toBe(503);
      expect(await hung.json()).toMatchObject({ status: 'not-ready', stores: [expect.objectContaining({ kind: 'postgres', ready: false })] });
      // The manifests' probe gives up after 2 s; the answer comes after the 300 ms bound, well before that.
      expect(tookMs).toBeLessThan(1_500);

      proxy.resume();
      await eventually(async () => (await fetch(readyz)).status === 200, 10_000);
    });
  });

  describe('as its own process (a pod)', () => {
    const prefix = uniquePrefix();
    const schema = `${prefix}lifecycle_store`;
    let child: ReturnType<typeof spawnTs>;
    let transport: NatsTransport;
    let bus: BusClient;
    let readyz: string;

    beforeAll(async () => {
      const port = await freePort();
      readyz = `http://127.0.0.1:${port}/readyz`;
      child = spawnTs('apps/lifecycle-store/src/main.ts', {
        NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
        DATABASE_URL: TEST_DATABASE_URL,
        DATABASE_SCHEMA_PREFIX: prefix,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        LOG_LEVEL: 'warn',
      });
      await eventually(async () => {
        if (child.exitCode !== null) throw new Error(`lifecycle-store exited: ${child.output().stderr}`);
        return (await fetch(readyz).catch(() => undefined))?.status === 200;
      }, 60_000);
      transport = await connectTestTransport('connection-loss-client');
      bus = new BusClient({ transport, defaultTimeoutMs: 10_000 });
    }, 90_000);

    afterAll(async () => {
      await transport?.close();
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        await waitForExit(child, 15_000);
      }
      await dropSchemasWithPrefix(prefix);
    }, 30_000);

    it('survives every backend of its pool terminated, idle or inside a transaction: typed UNAVAILABLE, then served again', async () => {
      const session = { tenant: 'acme', appName: 'dash', userId: 'alice', sessionId: 'pod-1' };
      // The creation's commit waits on this lock inside its transaction; the pool's other connections sit idle.
      const lock = await lockTable(schema, 'session_rows');
      try {
        const creating = bus.request(LifecycleCreateSession, { session, creationOperationId: 'op-pod' });
        const name = storeApplicationName('lifecycle-store', schema);
        await eventually(async () => (await backendsOf(name)).some((b) => b.waitingOnLock), 5_000);
        await terminateBackends((await backendsOf(name)).map((b) => b.pid));
        const failure = await expectAppError(creating, 'UNAVAILABLE');
        expect(failure.retryable).toBe(true);
      } finally {
        await lock.release();
      }
      await expect(bus.request(LifecycleCreateSession, { session, creationOperationId: 'op-pod' })).resolves.toMatchObject({ state: 'ACTIVE' });
      expect((await fetch(readyz)).status).toBe(200);
      expect(child.exitCode).toBeNull();
      expect(child.output().stderr).not.toMatch(/Unhandled|uncaught/i);
    });
  });
});
