import { randomBytes } from 'node:crypto';
import { createMemoryKeyspace, MemoryCoordinationStore, RedisCoordinationStore, type CoordinationStore } from '@apphost/coordination';
import { AppHostError, GovernedReasons, type HostProfile } from '@apphost/contracts';
import { expectAppError, TEST_REDIS_URL, uniquePrefix } from '@apphost/testing';
import { session as baseSession } from '../test/fake-plane';
import { liveViewRecord, viewContextOf } from '../test/view-context';
import type { PendingOperation } from './ports';
import { RpcLimiter, slotTtlOf } from './rpc-limiter';

/** Two replicas (two stores on one key prefix, two limiters) on the real Redis, with one clock the test moves. */
describe('RpcLimiter (real Redis, two replicas)', () => {
  const keyPrefix = `apphost:${uniquePrefix()}governed-operations:`;
  let stores: CoordinationStore[];
  let replicas: [RpcLimiter, RpcLimiter];
  /** A minute boundary, so the sliding window's arithmetic is exact. */
  let now = Math.ceil(Date.now() / 60_000) * 60_000 + 600_000;
  const clock = () => now;

  beforeAll(async () => {
    stores = await Promise.all([1, 2].map((n) => RedisCoordinationStore.connect({ url: TEST_REDIS_URL, keyPrefix, name: `limiter-${n}` })));
    replicas = [new RpcLimiter(stores[0], clock), new RpcLimiter(stores[1], clock)];
  });
  afterAll(() => Promise.all(stores.map((s) => s.close())));
  // Each test starts in a minute of its own, so no window counter of an earlier test is the current or previous one.
  beforeEach(() => (now = Math.ceil(now / 60_000) * 60_000 + 10 * 60_000));

  const freshSession = () => ({ ...baseSession, sessionId: `s-${randomBytes(6).toString('hex')}` });
  const contextOf = (rpc: NonNullable<HostProfile['rpc']>, session = freshSession()) =>
    viewContextOf({ record: liveViewRecord({ session }), raw: '' }, { rpc });
  const admitted = async (replica: RpcLimiter, context: ReturnType<typeof contextOf>) => (await replica.admit(context)).release();

  it('counts a View on both replicas against one sliding minute; refused requests do not count', async () => {
    const view = contextOf({ perViewPerMinute: 3 });
    now += 10_000;
    await admitted(replicas[0], view);
    await admitted(replicas[1], view);
    await admitted(replicas[0], view);
    const refused = await expectAppError(replicas[1].admit(view), 'RESOURCE_EXHAUSTED', 'RPC_RATE_LIMITED');
    expect(refused.retryable).toBe(true);
    // Refusals are counted per View (shared by the replicas), since the service does not audit them one by one.
    expect(await replicas[0].refusals(view.view.record.viewId)).toBe(1);
    // 3 in this minute: a fourth fits once 3 × (1 − elapsed) + 1 ≤ 3 in the next one, at 20 s into it.
    expect(refused.details).toMatchObject({ scope: 'view', limit: 3, retryAfterMs: 70_000 });

    await admitted(replicas[1], contextOf({ perViewPerMinute: 3 }, view.view.record.session)); // another View of the session

    now += 69_000;
    await expectAppError(replicas[0].admit(view), 'RESOURCE_EXHAUSTED', 'RPC_RATE_LIMITED');
    now += 1_000;
    await admitted(replicas[0], view); // fits only if the two refusals were not counted
    await expectAppError(replicas[1].admit(view), 'RESOURCE_EXHAUSTED', 'RPC_RATE_LIMITED');
    now += 2 * 60_000;
    await admitted(replicas[1], view);
  });

  it('counts every View of a session against the per-session minute; a refusal there gives back the View count', async () => {
    const session = freshSession();
    const a = contextOf({ perViewPerMinute: 10, perSessionPerMinute: 3 }, session);
    const b = contextOf({ perViewPerMinute: 10, perSessionPerMinute: 3 }, session);
    await admitted(replicas[0], a);
    await admitted(replicas[1], b);
    await admitted(replicas[0], a);
    const refused = await expectAppError(replicas[1].admit(a), 'RESOURCE_EXHAUSTED', 'RPC_RATE_LIMITED');
    expect(refused.details).toMatchObject({ scope: 'session', limit: 3, retryAfterMs: 80_000 });
    await expectAppError(replicas[0].admit(b), 'RESOURCE_EXHAUSTED', 'RPC_RATE_LIMITED');
    await admitted(replicas[0], contextOf({ perSessionPerMinute: 3 })); // another session
    const minute = Math.floor(now / 60_000);
    expect(await stores[0].get(`view-rpc:rate:view:${a.view.record.viewId}:${minute}`)).toBe('2');
    expect(await stores[0].get(`view-rpc:rate:view:${b.view.record.viewId}:${minute}`)).toBe('1');
  });

  it('holds a queue slot per admitted operation on any replica until it is released; release is idempotent', async () => {
    const view = contextOf({ queueDepth: 2 });
    const first = await replicas[0].admit(view);
    const second = await replicas[1].admit(view);
    const full = await expectAppError(replicas[0].admit(view), 'RESOURCE_EXHAUSTED', 'RPC_QUEUE_FULL');
    expect(full.retryable).toBe(true);
    expect(full.details).toMatchObject({ queueDepth: 2, held: 2 });
    // The refusal gave its rate count back.
    expect(await stores[1].get(`view-rpc:rate:view:${view.view.record.viewId}:${Math.floor(now / 60_000)}`)).toBe('2');

    await Promise.all([first.release(), first.release()]);
    await first.release();
    const third = await replicas[1].admit(view); // the one slot the three releases freed
    await expectAppError(replicas[0].admit(view), 'RESOURCE_EXHAUSTED', 'RPC_QUEUE_FULL');
    await Promise.all([second.release(), third.release()]);
    const [x, y] = await Promise.all([replicas[0].admit(view), replicas[1].admit(view)]);
    await Promise.all([x.release(), y.release()]);
  });

  it('claims the live id in the same step: an id in use is refused, counted by rate, holding no slot', async () => {
    const view = contextOf({ queueDepth: 2 });
    const { viewId } = view.view.record;
    const key = `view-rpc-live:${randomBytes(8).toString('hex')}`;
    const pending = (value: string): PendingOperation => ({
      claim: { key, value, ttlMs: 10_000 },
      claimed: () => ({ callId: 'vc-test', settle: () => Promise.resolve(true), cancelled: () => Promise.resolve(false) }),
      inUse: () => new AppHostError('INVALID_ARGUMENT', 'id in use', { details: GovernedReasons.details('RPC_ID_IN_USE') }),
    });
    const first = await replicas[0].admit(view, pending('first'));
    expect(await stores[1].get(key)).toBe('first');
    await expectAppError(replicas[1].admit(view, pending('second')), 'INVALID_ARGUMENT', 'RPC_ID_IN_USE');
    expect(await stores[0].get(key)).toBe('first');
    expect(await stores[0].get(`view-rpc:rate:view:${viewId}:${Math.floor(now / 60_000)}`)).toBe('2');
    // Its slot was given back: the depth of 2 still has room for one more; an id collision is no limiter refusal.
    const second = await replicas[1].admit(view);
    await Promise.all([first.release(), second.release()]);
    expect(await replicas[0].refusals(viewId)).toBe(0);
  });

  it('lets concurrent admissions on both replicas take no more than the queue depth', async () => {
    const view = contextOf({ queueDepth: 4 });
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => replicas[i % 2].admit(view)));
    const slots = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(slots).toHaveLength(4);
    for (const o of outcomes)
      if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'RESOURCE_EXHAUSTED', details: { reason: 'RPC_QUEUE_FULL' } });
    await Promise.all(slots.map((s) => s.release()));
  });

  it('fails closed when the store is unreachable', async () => {
    const closed = await RedisCoordinationStore.connect({ url: TEST_REDIS_URL, keyPrefix, name: 'limiter-closed' });
    await closed.close();
    await expectAppError(new RpcLimiter(closed, clock).admit(contextOf({})), 'UNAVAILABLE');
  });
});

describe('RpcLimiter slots of a crashed replica', () => {
  it('stop counting once the longest operation the profile allows (plus a grace) has passed', async () => {
    let now = Date.UTC(2030, 0, 1);
    const keyspace = createMemoryKeyspace();
    const replica = () => new RpcLimiter(new MemoryCoordinationStore({ keyPrefix: 'limiter:', name: 'limiter', now: () => now, keyspace }), () => now);
    const view = viewContextOf({ record: liveViewRecord(), raw: '' }, { rpc: { queueDepth: 1 } });
    const ttl = slotTtlOf(view.profile);
    expect(ttl).toBe(Math.max(view.profile.limits.callTimeoutMs, view.profile.limits.readTimeoutMs, view.profile.limits.mrtr.maxTotalMs) + 60_000);

    await replica().admit(view); // the replica that took it crashes: never released
    now += ttl;
    await expectAppError(replica().admit(view), 'RESOURCE_EXHAUSTED', 'RPC_QUEUE_FULL');
    now += 1;
    await (await replica().admit(view)).release();
  });
});
