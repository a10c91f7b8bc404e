import type { AppHostError } from '@apphost/contracts';
import type { CoordinationStore } from './coordination-store';
import { createMemoryKeyspace, MemoryCoordinationStore } from './memory-coordination-store';
import { RedisCoordinationStore } from './redis-coordination-store';
import { deleteKeysWithPrefix, REDIS_URL, sleep, uniquePrefix } from '../test/redis';

/** What the shared suite needs from a backend: stores on one keyspace, and a way to let time pass. */
interface Backend {
  open(keyPrefix: string): Promise<CoordinationStore>;
  /** Redis: real waiting; memory: the injected clock moves. */
  advance(ms: number): Promise<void>;
  teardown(): Promise<void>;
}

function redisBackend(): Backend {
  const stores: CoordinationStore[] = [];
  return {
    async open(keyPrefix) {
      const store = await RedisCoordinationStore.connect({ url: REDIS_URL, keyPrefix, name: 'coordination-test' });
      stores.push(store);
      return store;
    },
    advance: sleep,
    async teardown() {
      await Promise.all(stores.splice(0).map((s) => s.close()));
    },
  };
}

function memoryBackend(): Backend {
  const keyspace = createMemoryKeyspace();
  let clock = 1_700_000_000_000;
  return {
    async open(keyPrefix) {
      return new MemoryCoordinationStore({ keyPrefix, name: 'coordination-test', now: () => clock, keyspace });
    },
    async advance(ms) {
      clock += ms;
    },
    async teardown() {
      keyspace.clear();
    },
  };
}

const code = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: AppHostError) => error.code,
  );

describe.each([
  { kind: 'redis', backend: redisBackend },
  { kind: 'memory', backend: memoryBackend },
])('CoordinationStore ($kind)', ({ kind, backend: makeBackend }) => {
  const runPrefix = uniquePrefix();
  let backend: Backend;
  let store: CoordinationStore;
  let testNo = 0;

  beforeEach(async () => {
    backend = makeBackend();
    store = await backend.open(`${runPrefix}t${++testNo}:`);
  });
  afterEach(() => backend.teardown());
  afterAll(async () => {
    if (kind === 'redis') await deleteKeysWithPrefix(REDIS_URL, runPrefix);
  });

  it('reports itself ready', async () => {
    expect(store.kind).toBe(kind);
    expect(await store.ping()).toBe(true);
    expect(await store.report()).toEqual({ kind, name: 'coordination-test', ready: true });
  });

  it('sets a key only once and the value is readable', async () => {
    expect(await store.get('lease')).toBeNull();
    expect(await store.setIfAbsent('lease', 'holder-a', 10_000)).toBe(true);
    expect(await store.setIfAbsent('lease', 'holder-b', 10_000)).toBe(false);
    expect(await store.get('lease')).toBe('holder-a');
  });

  it('lets only one of many concurrent callers take a key', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.setIfAbsent('lock', `h${i}`, 10_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.get('lock')).toBe(`h${results.indexOf(true)}`);
  });

  it('treats an expired key as absent', async () => {
    expect(await store.setIfAbsent('lease', 'holder-a', 150)).toBe(true);
    expect(await store.get('lease')).toBe('holder-a');
    await backend.advance(300);
    expect(await store.get('lease')).toBeNull();
    expect(await store.compareAndDelete('lease', 'holder-a')).toBe(false);
    expect(await store.compareAndExpire('lease', 'holder-a', 10_000)).toBe(false);
    expect(await store.setIfAbsent('lease', 'holder-b', 10_000)).toBe(true);
    expect(await store.get('lease')).toBe('holder-b');
  });

  it('replaces a value (with a fresh TTL) only while it holds the expected one', async () => {
    await store.setIfAbsent('claim', 'v1', 200);
    expect(await store.compareAndSet('claim', 'other', 'v2', 10_000)).toBe(false);
    expect(await store.compareAndSet('claim', 'v1', 'v2', 10_000)).toBe(true);
    await backend.advance(300);
    expect(await store.get('claim')).toBe('v2');
    expect(await store.compareAndSet('absent', 'v1', 'v2', 10_000)).toBe(false);
    expect(await store.get('absent')).toBeNull();
  });

  it('deletes only with the right value', async () => {
    await store.setIfAbsent('lease', 'holder-a', 10_000);
    expect(await store.compareAndDelete('lease', 'holder-b')).toBe(false);
    expect(await store.get('lease')).toBe('holder-a');
    expect(await store.compareAndDelete('lease', 'holder-a')).toBe(true);
    expect(await store.get('lease')).toBeNull();
    expect(await store.compareAndDelete('lease', 'holder-a')).toBe(false);
  });

  it('renews only for the holder', async () => {
    await store.setIfAbsent('held', 'holder-a', 150);
    await store.setIfAbsent('stolen', 'holder-a', 150);
    expect(await store.compareAndExpire('held', 'holder-a', 10_000)).toBe(true);
    expect(await store.compareAndExpire('stolen', 'holder-b', 10_000)).toBe(false);
    await backend.advance(300);
    expect(await store.get('held')).toBe('holder-a');
    expect(await store.get('stolen')).toBeNull();
  });

  it('hands out strictly increasing, distinct fencing tokens under concurrency', async () => {
    const tokens = await Promise.all(Array.from({ length: 100 }, () => store.incrementFence('fence')));
    expect(new Set(tokens).size).toBe(100);
    expect([...tokens].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(await store.incrementFence('fence')).toBe(101);
    await backend.advance(300);
    expect(await store.get('fence')).toBe('101');
  });

  it('refuses to use a lease key as a fence', async () => {
    await store.setIfAbsent('lease', 'holder-a', 10_000);
    expect(await code(store.incrementFence('lease'))).toBe('FAILED_PRECONDITION');
    expect(await store.get('lease')).toBe('holder-a');
  });

  it('adds to a counter atomically, by any safe integer', async () => {
    const values = await Promise.all(Array.from({ length: 100 }, () => store.increment('counter', 1, 10_000)));
    expect([...values].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(await store.increment('counter', -30, 10_000)).toBe(70);
    expect(await store.increment('counter', 5, 10_000)).toBe(75);
    expect(await store.increment('fresh', -1, 10_000)).toBe(-1);
    expect(await store.get('counter')).toBe('75');
  });

  it('gives a new counter its TTL and lets an existing one keep its own', async () => {
    expect(await store.increment('window', 1, 200)).toBe(1);
    await backend.advance(100);
    expect(await store.increment('window', 1, 10_000)).toBe(2); // keeps the first TTL: the window still ends on time
    await backend.advance(200);
    expect(await store.get('window')).toBeNull();
    expect(await store.increment('window', 1, 10_000)).toBe(1);
    expect(await store.incrementFence('fence')).toBe(1);
    expect(await store.increment('fence', 1, 150)).toBe(2); // a counter without a TTL gets one
    await backend.advance(300);
    expect(await store.get('fence')).toBeNull();
  });

  it('refuses to use a lease key or a slots key as a counter', async () => {
    await store.setIfAbsent('lease', 'holder-a', 10_000);
    await store.acquireSlot('slots', 'h', 1, 10_000);
    expect(await code(store.increment('lease', 1, 10_000))).toBe('FAILED_PRECONDITION');
    expect(await code(store.increment('slots', 1, 10_000))).toBe('FAILED_PRECONDITION');
    expect(await store.get('lease')).toBe('holder-a');
  });

  it('hands out at most `capacity` slots; a holder counts once; release frees one, once', async () => {
    expect(await store.acquireSlot('q', 'a', 2, 10_000)).toEqual({ acquired: true, held: 1 });
    expect(await store.acquireSlot('q', 'b', 2, 10_000)).toEqual({ acquired: true, held: 2 });
    expect(await store.acquireSlot('q', 'c', 2, 10_000)).toEqual({ acquired: false, held: 2 });
    expect(await store.acquireSlot('q', 'a', 2, 10_000)).toEqual({ acquired: true, held: 2 });
    expect(await store.releaseSlot('q', 'b')).toBe(true);
    expect(await store.releaseSlot('q', 'b')).toBe(false);
    expect(await store.releaseSlot('q', 'never-held')).toBe(false);
    expect(await store.acquireSlot('q', 'c', 2, 10_000)).toEqual({ acquired: true, held: 2 });
    expect(await store.acquireSlot('q', 'd', 2, 10_000)).toEqual({ acquired: false, held: 2 });
    expect(await store.acquireSlot('other', 'd', 2, 10_000)).toEqual({ acquired: true, held: 1 });
  });

  it('lets only `capacity` of many concurrent holders take a slot', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.acquireSlot('q', `h${i}`, 5, 10_000)));
    expect(results.filter((r) => r.acquired)).toHaveLength(5);
    expect(Math.max(...results.map((r) => r.held))).toBe(5);
  });

  it('stops counting a slot nobody released once its TTL passes', async () => {
    expect((await store.acquireSlot('q', 'crashed', 2, 150)).acquired).toBe(true);
    expect((await store.acquireSlot('q', 'alive', 2, 10_000)).acquired).toBe(true);
    expect((await store.acquireSlot('q', 'late', 2, 10_000)).acquired).toBe(false);
    await backend.advance(300);
    expect(await store.acquireSlot('q', 'late', 2, 10_000)).toEqual({ acquired: true, held: 2 });
    expect(await store.releaseSlot('q', 'crashed')).toBe(false);
    expect(await store.releaseSlot('q', 'alive')).toBe(true);
    expect(await store.releaseSlot('q', 'late')).toBe(true);
    await backend.advance(300);
    expect(await store.acquireSlot('q', 'x', 1, 150)).toEqual({ acquired: true, held: 1 });
  });

  it('refuses to use a lease key or a counter as slots', async () => {
    await store.setIfAbsent('lease', 'holder-a', 10_000);
    await store.increment('counter', 1, 10_000);
    for (const key of ['lease', 'counter']) {
      expect(await code(store.acquireSlot(key, 'h', 1, 10_000))).toBe('FAILED_PRECONDITION');
      expect(await code(store.releaseSlot(key, 'h'))).toBe('FAILED_PRECONDITION');
    }
    expect(await store.get('lease')).toBe('holder-a');
    expect(await store.get('counter')).toBe('1');
  });

  describe('admit', () => {
    const window = (key: string, limit: number, elapsedMs = 0) => ({
      key: `${key}:1`,
      previousKey: `${key}:0`,
      limit,
      windowMs: 60_000,
      elapsedMs,
      ttlMs: 10_000,
    });
    const admission = (holder: string, extra: { limit?: number; capacity?: number; claim?: string } = {}) => ({
      windows: [window('view', extra.limit ?? 10), window('session', 100)],
      slot: { key: 'queue', holder, capacity: extra.capacity ?? 2, ttlMs: 10_000 },
      ...(extra.claim ? { claim: { key: extra.claim, value: holder, ttlMs: 10_000 } } : {}),
      refusals: { key: 'refused', ttlMs: 10_000 },
    });

    it('counts every window, takes the slot and sets the claim in one step', async () => {
      expect(await store.admit(admission('a', { claim: 'id-1' }))).toEqual({ admitted: true, held: 1 });
      expect(await store.get('view:1')).toBe('1');
      expect(await store.get('session:1')).toBe('1');
      expect(await store.get('id-1')).toBe('a');
      expect(await store.releaseSlot('queue', 'a')).toBe(true);
      expect(await store.get('refused')).toBeNull();
    });

    it('weighs the previous window by what is left of it; a refusal gives every count back and is counted', async () => {
      await store.increment('view:0', 6, 10_000);
      // 6 × (1 − 30/60) + 2 ≤ 5, then a third does not fit: refused by the first window, nothing else counted.
      const half = (holder: string) => ({
        ...admission(holder, { limit: 5, capacity: 10 }),
        windows: [window('view', 5, 30_000), window('session', 100, 30_000)],
      });
      expect((await store.admit(half('a'))).admitted).toBe(true);
      expect((await store.admit(half('b'))).admitted).toBe(true);
      expect(await store.admit(half('c'))).toEqual({ admitted: false, refusedBy: 'window', window: 0, previous: 6, current: 2 });
      expect(await store.get('view:1')).toBe('2');
      expect(await store.get('session:1')).toBe('2');
      expect(await store.get('refused')).toBe('1');
      // The second window refusing gives the first one's count back too.
      const sessionFull = { ...admission('d'), windows: [window('view', 100), window('session', 2)] };
      expect(await store.admit(sessionFull)).toEqual({ admitted: false, refusedBy: 'window', window: 1, previous: 0, current: 2 });
      expect(await store.get('view:1')).toBe('2');
      expect(await store.get('refused')).toBe('2');
      expect(await store.releaseSlot('queue', 'c')).toBe(false);
    });

    it('refuses when the slots are taken (counts given back); a claim held already gives the slot back', async () => {
      expect((await store.admit(admission('a', { capacity: 1 }))).admitted).toBe(true);
      expect(await store.admit(admission('b', { capacity: 1 }))).toEqual({ admitted: false, refusedBy: 'slot', held: 1 });
      expect(await store.get('view:1')).toBe('1');
      expect(await store.get('refused')).toBe('1');
      expect(await store.releaseSlot('queue', 'a')).toBe(true);
      await store.setIfAbsent('id-7', 'someone', 10_000);
      expect(await store.admit(admission('c', { capacity: 1, claim: 'id-7' }))).toEqual({ admitted: false, refusedBy: 'claim', held: 0 });
      // The request was counted (it was admitted by rate), its slot given back, the claim untouched, no refusal counted.
      expect(await store.get('view:1')).toBe('2');
      expect(await store.get('id-7')).toBe('someone');
      expect(await store.get('refused')).toBe('1');
      expect(await store.admit(admission('d', { capacity: 1, claim: 'id-8' }))).toEqual({ admitted: true, held: 1 });
    });

    it('admits at most capacity, and at most the limit, of many concurrent requests', async () => {
      const bySlots = await Promise.all(Array.from({ length: 30 }, (_, i) => store.admit(admission(`h${i}`, { limit: 20, capacity: 5 }))));
      expect(bySlots.filter((o) => o.admitted)).toHaveLength(5);
      expect(bySlots.filter((o) => !o.admitted && o.refusedBy === 'slot')).toHaveLength(25);
      expect(await store.get('view:1')).toBe('5'); // the refused ones gave their counts back
      const byRate = await Promise.all(Array.from({ length: 30 }, (_, i) => store.admit(admission(`r${i}`, { limit: 8, capacity: 100 }))));
      expect(byRate.filter((o) => o.admitted)).toHaveLength(3);
      expect(byRate.filter((o) => !o.admitted && o.refusedBy === 'window')).toHaveLength(27);
      expect(await store.get('view:1')).toBe('8');
      expect(await store.get('refused')).toBe('52');
    });

    it('refuses keys of the wrong kind with FAILED_PRECONDITION and nothing counted', async () => {
      await store.setIfAbsent('lease', 'holder-a', 10_000);
      await store.acquireSlot('slots', 'h', 1, 10_000);
      const withPrevious = { ...admission('a'), windows: [window('view', 10), { ...window('session', 10), previousKey: 'lease' }] };
      expect(await code(store.admit(withPrevious))).toBe('FAILED_PRECONDITION');
      expect(await code(store.admit({ ...admission('a'), windows: [window('view', 10), { ...window('x', 10), key: 'slots' }] }))).toBe('FAILED_PRECONDITION');
      expect(await code(store.admit({ ...admission('a'), slot: { key: 'lease', holder: 'a', capacity: 1, ttlMs: 1000 } }))).toBe('FAILED_PRECONDITION');
      expect(Number((await store.get('view:1')) ?? 0)).toBe(0);
      expect(await store.get('lease')).toBe('holder-a');
    });

    it('rejects invalid admissions with INVALID_ARGUMENT and no effect', async () => {
      const invalid = [
        { ...admission('a'), windows: Array.from({ length: 9 }, (_, i) => window(`w${i}`, 1)) },
        { ...admission('a'), windows: [{ ...window('view', 1), elapsedMs: 60_001 }] },
        { ...admission('a'), windows: [{ ...window('view', 1), limit: -1 }] },
        { ...admission('a'), slot: { key: 'queue', holder: '', capacity: 1, ttlMs: 1000 } },
        { ...admission('a'), claim: { key: 'c', value: 'v', ttlMs: 0 } },
      ];
      for (const a of invalid) expect(await code(store.admit(a))).toBe('INVALID_ARGUMENT');
      expect(await store.get('view:1')).toBeNull();
    });
  });

  it('isolates stores with different prefixes', async () => {
    const other = await backend.open(`${runPrefix}t${testNo}-other:`);
    expect(await store.setIfAbsent('k', 'mine', 10_000)).toBe(true);
    expect(await other.get('k')).toBeNull();
    expect(await other.compareAndDelete('k', 'mine')).toBe(false);
    expect(await other.setIfAbsent('k', 'theirs', 10_000)).toBe(true);
    expect(await store.get('k')).toBe('mine');
    expect(await store.incrementFence('f')).toBe(1);
    expect(await other.incrementFence('f')).toBe(1);
  });

  it('lists the live keys under a prefix, only its own, glob characters taken literally', async () => {
    const other = await backend.open(`${runPrefix}t${testNo}-other:`);
    await store.setIfAbsent('p:a', '1', 10_000);
    await store.setIfAbsent('p:b', '2', 10_000);
    await store.setIfAbsent('p*:c', '3', 10_000);
    await store.setIfAbsent('q:a', '4', 10_000);
    await store.setIfAbsent('p:short', '5', 50);
    await other.setIfAbsent('p:x', '6', 10_000);
    await backend.advance(120);
    expect((await store.keysWithPrefix('p:')).sort()).toEqual(['p:a', 'p:b']);
    expect(await store.keysWithPrefix('p*')).toEqual(['p*:c']);
    expect(await other.keysWithPrefix('p:')).toEqual(['p:x']);
    expect(await store.keysWithPrefix('none:')).toEqual([]);
  });

  it('shares state between stores with the same prefix', async () => {
    const twin = await backend.open(`${runPrefix}t${testNo}:`);
    await store.setIfAbsent('k', 'mine', 10_000);
    expect(await twin.get('k')).toBe('mine');
    expect(await twin.setIfAbsent('k', 'theirs', 10_000)).toBe(false);
  });

  it('rejects invalid arguments with INVALID_ARGUMENT and no effect', async () => {
    const invalidTtls = [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 24 * 60 * 60 * 1000 + 1];
    for (const ttl of invalidTtls) expect(await code(store.setIfAbsent('k', 'v', ttl))).toBe('INVALID_ARGUMENT');
    for (const key of ['', 'x'.repeat(513), 42 as unknown as string]) {
      expect(await code(store.setIfAbsent(key, 'v', 1000))).toBe('INVALID_ARGUMENT');
      expect(await code(store.get(key))).toBe('INVALID_ARGUMENT');
      expect(await code(store.compareAndDelete(key, 'v'))).toBe('INVALID_ARGUMENT');
      expect(await code(store.compareAndExpire(key, 'v', 1000))).toBe('INVALID_ARGUMENT');
      expect(await code(store.incrementFence(key))).toBe('INVALID_ARGUMENT');
    }
    expect(await code(store.setIfAbsent('k', undefined as unknown as string, 1000))).toBe('INVALID_ARGUMENT');
    expect(await store.get('k')).toBeNull();

    await store.setIfAbsent('held', 'holder-a', 150);
    expect(await code(store.compareAndExpire('held', 'holder-a', 0))).toBe('INVALID_ARGUMENT');
    expect(await code(store.compareAndDelete('held', null as unknown as string))).toBe('INVALID_ARGUMENT');
    await backend.advance(300);
    expect(await store.get('held')).toBeNull(); // the rejected renewal did not extend the lease

    for (const by of [1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1, '1' as unknown as number]) {
      expect(await code(store.increment('n', by, 1000))).toBe('INVALID_ARGUMENT');
    }
    expect(await code(store.increment('n', 1, 0))).toBe('INVALID_ARGUMENT');
    for (const capacity of [0, -1, 1.5, 100_001]) expect(await code(store.acquireSlot('s', 'h', capacity, 1000))).toBe('INVALID_ARGUMENT');
    for (const holder of ['', 'x'.repeat(513), 7 as unknown as string]) {
      expect(await code(store.acquireSlot('s', holder, 1, 1000))).toBe('INVALID_ARGUMENT');
      expect(await code(store.releaseSlot('s', holder))).toBe('INVALID_ARGUMENT');
    }
    expect(await code(store.acquireSlot('s', 'h', 1, 24 * 60 * 60 * 1000 + 1))).toBe('INVALID_ARGUMENT');
    expect(await store.get('n')).toBeNull();
    expect(await store.acquireSlot('s', 'h', 1, 1000)).toEqual({ acquired: true, held: 1 });

    expect(await store.setIfAbsent('x'.repeat(512), 'v', 1000)).toBe(true);
    expect(await store.incrementFence('fence')).toBe(1);
  });

  it('rejects an invalid keyPrefix', async () => {
    for (const prefix of ['', 'no-trailing-colon', 'glob*:', 'space :', `${'a'.repeat(128)}:`]) {
      expect(await code(backend.open(prefix).then((s) => s.close()))).toBe('INVALID_ARGUMENT');
    }
  });

  it('fails closed once closed', async () => {
    await store.setIfAbsent('k', 'v', 10_000);
    await store.close();
    await store.close();
    expect(await store.ping()).toBe(false);
    expect(await store.report()).toEqual({ kind, name: 'coordination-test', ready: false });
    expect(await code(store.get('k'))).toBe('UNAVAILABLE');
    expect(await code(store.setIfAbsent('k2', 'v', 1000))).toBe('UNAVAILABLE');
    expect(await code(store.incrementFence('f'))).toBe('UNAVAILABLE');
    expect(await code(store.keysWithPrefix('k'))).toBe('UNAVAILABLE');
    expect(await code(store.increment('n', 1, 1000))).toBe('UNAVAILABLE');
    expect(await code(store.acquireSlot('s', 'h', 1, 1000))).toBe('UNAVAILABLE');
    expect(await code(store.releaseSlot('s', 'h'))).toBe('UNAVAILABLE');
  });
});
