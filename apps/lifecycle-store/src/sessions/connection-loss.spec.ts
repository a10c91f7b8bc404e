import { LifecycleCreateSession, LifecycleGetSession } from '@apphost/contracts';
import {
  backendsOf,
  eventually,
  expectAppError,
  latch,
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
});
