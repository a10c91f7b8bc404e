import type { ChildProcess } from 'node:child_process';
import type { AppHostError } from '@apphost/contracts';
import { createCoordinationStore } from './create-coordination-store';
import { MemoryCoordinationStore } from './memory-coordination-store';
import { RedisCoordinationStore } from './redis-coordination-store';
import { eventually, freePort, killHard, REDIS_URL, startRedisServer, uniquePrefix } from '../test/redis';

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: AppHostError) => error,
  );

describe('RedisCoordinationStore faults', () => {
  const stores: RedisCoordinationStore[] = [];
  const children: ChildProcess[] = [];
  const open = async (url: string) => {
    const store = await RedisCoordinationStore.connect({ url, keyPrefix: uniquePrefix(), name: 'coordination-faults' });
    stores.push(store);
    return store;
  };

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await Promise.all(children.map(killHard));
  });

  it('connects to a closed port quickly, reports not ready and fails UNAVAILABLE without the password', async () => {
    const port = await freePort();
    const url = `redis://:hunter2@127.0.0.1:${port}`;
    const started = Date.now();
    const store = await open(url);
    expect(await store.ping()).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await store.report()).toEqual({ kind: 'redis', name: 'coordination-faults', ready: false });

    const attempted = Date.now();
    const error = await rejection(store.setIfAbsent('lease', 'a', 1000));
    expect(Date.now() - attempted).toBeLessThan(3000);
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('coordination store unavailable');
    expect(JSON.stringify({ stack: error.stack, ...error.toEnvelope() })).not.toContain('hunter2');
  });

  it('rejects a malformed URL without echoing it', async () => {
    const error = await rejection(RedisCoordinationStore.connect({ url: 'http://:hunter2@host', keyPrefix: 'x:', name: 'n' }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(JSON.stringify(error.toEnvelope())).not.toContain('hunter2');
  });

  it('fails closed while Redis is down and recovers when it comes back', async () => {
    const port = await freePort();
    children.push(await startRedisServer(port));
    const store = await open(`redis://127.0.0.1:${port}`);
    expect(await store.ping()).toBe(true);
    expect(await store.setIfAbsent('before', 'a', 10_000)).toBe(true);

    await killHard(children[0]);
    expect(await eventually(async () => !(await store.ping()), 3000)).toBe(true);
    for (const op of [
      store.setIfAbsent('during', 'a', 10_000),
      store.get('before'),
      store.incrementFence('f'),
      store.increment('n', 1, 1000),
      store.acquireSlot('s', 'h', 1, 1000),
    ]) {
      expect((await rejection(op)).code).toBe('UNAVAILABLE');
    }
    expect((await store.report()).ready).toBe(false);

    children.push(await startRedisServer(port));
    expect(await eventually(() => store.ping(), 5000)).toBe(true);
    expect(await store.setIfAbsent('after', 'a', 10_000)).toBe(true);
    expect(await store.compareAndDelete('after', 'a')).toBe(true); // scripts reload after the restart
    expect(await store.acquireSlot('slots', 'h', 1, 10_000)).toEqual({ acquired: true, held: 1 });
    expect(await store.get('before')).toBeNull(); // nothing was persisted: the state was ephemeral
  });

  it('starts while Redis is down, then recovers once it is up, logging only redacted messages', async () => {
    const port = await freePort();
    const logs: string[] = [];
    const logger = {
      info: (obj: object, msg: string) => logs.push(msg + JSON.stringify(obj)),
      warn: (obj: object, msg: string) => logs.push(msg + JSON.stringify(obj)),
    };
    const store = await RedisCoordinationStore.connect({ url: `redis://:hunter2@127.0.0.1:${port}`, keyPrefix: uniquePrefix(), name: 'n', logger });
    stores.push(store);
    expect(await store.ping()).toBe(false);
    expect((await rejection(store.get('k'))).code).toBe('UNAVAILABLE');

    children.push(await startRedisServer(port, ['--requirepass', 'hunter2']));
    expect(await eventually(() => store.ping(), 5000)).toBe(true);
    expect(await store.setIfAbsent('k', 'v', 1000)).toBe(true);
    expect(logs.map((l) => l.split('{')[0])).toEqual(['coordination store unavailable', 'coordination store recovered']);
    expect(logs.join('\n')).toContain(`redis://:***@127.0.0.1:${port}`);
    expect(logs.join('\n')).not.toContain('hunter2');
  });

  it('fails UNAVAILABLE, not hangs, when a command cannot be answered in time', async () => {
    const port = await freePort();
    const child = await startRedisServer(port);
    children.push(child);
    const store = await RedisCoordinationStore.connect({ url: `redis://127.0.0.1:${port}`, keyPrefix: uniquePrefix(), name: 'n', commandTimeoutMs: 200 });
    stores.push(store);
    child.kill('SIGSTOP'); // the server hangs: the socket stays open, nothing answers
    try {
      const started = Date.now();
      expect((await rejection(store.get('k'))).code).toBe('UNAVAILABLE');
      expect(Date.now() - started).toBeLessThan(1000);
      expect(await store.ping()).toBe(false);
    } finally {
      child.kill('SIGCONT');
    }
    expect(await eventually(() => store.ping(), 3000)).toBe(true);
  });
});

describe('createCoordinationStore', () => {
  it('picks memory without a URL and Redis with one', async () => {
    const memory = await createCoordinationStore({ keyPrefix: 'apphost:test:', name: 'm' });
    expect(memory).toBeInstanceOf(MemoryCoordinationStore);
    const redis = await createCoordinationStore({ url: REDIS_URL, keyPrefix: uniquePrefix(), name: 'r' });
    try {
      expect(redis.kind).toBe('redis');
      expect(await redis.ping()).toBe(true);
    } finally {
      await redis.close();
    }
    expect((await rejection(createCoordinationStore({ url: '', keyPrefix: 'apphost:test:', name: 'r' }))).code).toBe('INVALID_ARGUMENT');
  });
});
