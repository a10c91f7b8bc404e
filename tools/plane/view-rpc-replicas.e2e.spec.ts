import fs from 'node:fs';
import { bootService, eventually, type ServiceUnderTest } from '@apphost/testing';
import { fixtureSpec } from './catalog-harness';
import { loadServiceDefinitions } from './services';
import { callsFile, executed, openView, resultOf, rpcErrorOf, startRpcPlane, structuredOf, type LiveView, type RpcPlane } from './view-rpc-harness';
import { viewProfile } from './views-harness';

/**
 * View RPC admission limits and replicas, end to end: the per-View and per-session rate and the queue depth
 * (small profile limits), and more governed-operations replicas on the same stores serving the calls of one View
 * in turn — the live id scope, cancellation, limits and idempotent outcomes are shared in Redis, not per process.
 * Budget: ~35 s to boot and bind (plus two replicas), ~30 s of tests.
 */
jest.setTimeout(150_000);

/** A service stopped by the test and again by the plane's stop: only the first stop does anything. */
function stopOnce(service: ServiceUnderTest): ServiceUnderTest {
  const stop = service.stop.bind(service);
  let stopping: Promise<void> | undefined;
  service.stop = () => (stopping ??= stop());
  return service;
}

describe('View RPC limits and replicas in the plane', () => {
  let rpcPlane: RpcPlane;
  let alice: string;
  const replicas: ServiceUnderTest[] = [];
  const calls: Record<'limits' | 'queue' | 'replicas', string> = { limits: '', queue: '', replicas: '' };
  const rpc = () => rpcPlane.rpc;

  const bootReplica = async () => {
    const definition = loadServiceDefinitions().find((d) => d.name === 'governed-operations');
    if (!definition) throw new Error('no governed-operations service definition');
    const replica = stopOnce(await bootService(definition, rpcPlane.prefix, { NATS_URL: rpcPlane.nats.url }));
    replicas.push(replica);
    return replica;
  };

  beforeAll(async () => {
    const prefix = `rpc-replicas-${process.pid}`;
    for (const name of Object.keys(calls) as Array<keyof typeof calls>) calls[name] = callsFile(prefix, name);
    const base = viewProfile();
    rpcPlane = await startRpcPlane({
      apps: { limits: ['limits'], queue: ['queue'], replicas: ['replicas'] },
      profiles: {
        p1: base,
        'p-rate': { ...base, rpc: { perViewPerMinute: 5, perSessionPerMinute: 8 } },
        'p-queue': { ...base, rpc: { queueDepth: 2 } },
      },
      toolsets: {
        limits: fixtureSpec('stateful-nonce', 'p-rate', [`--calls-file=${calls.limits}`]),
        queue: fixtureSpec('stateful-nonce', 'p-queue', [`--calls-file=${calls.queue}`]),
        replicas: fixtureSpec('stateful-nonce', 'p1', [`--calls-file=${calls.replicas}`]),
      },
    });
    stopOnce(rpcPlane.plane.governed);
    alice = await rpcPlane.bearer('alice');
  }, 120_000);

  afterAll(async () => {
    for (const replica of replicas.reverse()) await replica.stop().catch(() => undefined);
    await rpcPlane?.stop();
    for (const file of Object.values(calls)) fs.rmSync(file, { force: true });
  });

  describe('admission limits', () => {
    it('per View: past 5 a minute, RESOURCE_EXHAUSTED RPC_RATE_LIMITED (retryable, -32005), nothing executed', async () => {
      const view = await openView(rpcPlane.http, alice, { appName: 'limits', sessionId: 's-rate-1', tool: 'start-session' });
      for (let i = 0; i < 5; i++) expect(structuredOf(await rpc().call(view, 'echo', { text: `n${i}` }))).toEqual({ text: `n${i}` });
      const limited = rpcErrorOf(await rpc().call(view, 'echo', { text: 'one too many' }));
      expect(limited).toMatchObject({ code: -32005, data: { code: 'RESOURCE_EXHAUSTED', reason: 'RPC_RATE_LIMITED', retryable: true } });
      expect(executed(calls.limits, 'echo')).toBe(5);
    });

    it('per session: two Views of one session share 8 a minute', async () => {
      const first = await openView(rpcPlane.http, alice, { appName: 'limits', sessionId: 's-rate-2', tool: 'start-session' });
      const second = await openView(rpcPlane.http, alice, {
        appName: 'limits',
        sessionId: 's-rate-2',
        tool: 'start-session',
        existingSession: true,
        invocationId: 'inv-2',
        functionCallId: 'call-2',
      });
      const before = executed(calls.limits, 'echo');
      for (let i = 0; i < 5; i++) resultOf(await rpc().call(first, 'echo', { text: 'a' }));
      for (let i = 0; i < 3; i++) resultOf(await rpc().call(second, 'echo', { text: 'b' }));
      expect(rpcErrorOf(await rpc().call(second, 'echo', { text: 'b' })).data).toMatchObject({ reason: 'RPC_RATE_LIMITED', retryable: true });
      expect(executed(calls.limits, 'echo')).toBe(before + 8);
    });

    it('queue depth 2: a third concurrent call is RPC_QUEUE_FULL and never runs; the slot frees when a call ends', async () => {
      const view = await openView(rpcPlane.http, alice, { appName: 'queue', sessionId: 's-queue', tool: 'start-session' });
      const replies = await Promise.all(
        [0, 80, 160].map((delay) => new Promise((r) => setTimeout(r, delay)).then(() => rpc().call(view, 'slow', { ms: 1500 }))),
      );
      const full = replies.filter((r) => r.body.error?.data?.reason === 'RPC_QUEUE_FULL');
      expect(full).toHaveLength(1);
      expect(rpcErrorOf(full[0])).toMatchObject({ code: -32005, data: { code: 'RESOURCE_EXHAUSTED', retryable: true } });
      expect(replies.filter((r) => r.body.result?.structuredContent?.slept === 1500)).toHaveLength(2);
      expect(executed(calls.queue, 'slow')).toBe(2);
      expect(structuredOf(await rpc().call(view, 'slow', { ms: 0 }))).toMatchObject({ slept: 0 });
    });
  });

  describe('replicas', () => {
    let view: LiveView;
    let nonce: string;

    it('a second replica serves the View once the first is gone: same connection, the retained outcome, nothing run twice', async () => {
      view = await openView(rpcPlane.http, alice, { appName: 'replicas', sessionId: 's-rep', tool: 'start-session' });
      nonce = (view.toolResult.structuredContent as { nonce: string }).nonce;
      const first = resultOf(await rpc().call(view, 'slow', { ms: 1 }, { key: 'k-replica' }));
      expect(executed(calls.replicas, 'slow')).toBe(1);

      await bootReplica();
      await rpcPlane.plane.governed.stop();
      expect(structuredOf(await rpc().call(view, 'follow-up', { nonce }))).toMatchObject({ ok: true });
      expect(resultOf(await rpc().call(view, 'slow', { ms: 1 }, { key: 'k-replica' }))).toEqual(first);
      expect(executed(calls.replicas, 'slow')).toBe(1);
    });

    it('with two replicas up, alternate calls share the live id scope and cancellation', async () => {
      await bootReplica();
      // Ten calls land on either replica: each answers on the View's own connection.
      for (let i = 0; i < 10; i++) expect(structuredOf(await rpc().call(view, 'whoami'))).toMatchObject({ nonce });

      const before = executed(calls.replicas, 'slow');
      const held = rpc().call(view, 'slow', { ms: 20_000, steps: 100 }, { id: 'shared-id' });
      await eventually(async () => (executed(calls.replicas, 'slow') > before ? true : undefined), 10_000, 25);
      // Whichever replica takes them, the id is live, and the cancel reaches the call on the other replica.
      for (let i = 0; i < 4; i++) {
        expect(rpcErrorOf(await rpc().call(view, 'echo', { text: 'clash' }, { id: 'shared-id' })).data).toMatchObject({ reason: 'RPC_ID_IN_USE' });
      }
      expect((await rpc().cancel(view, 'shared-id')).status).toBe(202);
      expect((await held).status).toBe(204);
      expect(executed(calls.replicas, 'echo')).toBe(0);
    });

    it('the last replica standing delivers the same retained outcome', async () => {
      const [second] = replicas;
      await second.stop();
      const replay = resultOf(await rpc().call(view, 'slow', { ms: 1 }, { key: 'k-replica' }));
      expect(replay.structuredContent).toMatchObject({ slept: 1 });
      expect(executed(calls.replicas, 'slow')).toBe(2); // the keyed call once, the cancelled one once
    });
  });
});
