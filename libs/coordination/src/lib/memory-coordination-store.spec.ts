import { createMemoryKeyspace, MemoryCoordinationStore } from './memory-coordination-store';

describe('MemoryCoordinationStore', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => (clock = 1_000_000));

  it('expires a key once the clock is past its deadline, as Redis does', async () => {
    const store = new MemoryCoordinationStore({ keyPrefix: 'test:', name: 'mem', now });
    await store.setIfAbsent('lease', 'a', 100);
    clock += 100;
    expect(await store.get('lease')).toBe('a');
    clock += 1;
    expect(await store.get('lease')).toBeNull();
  });

  it('renews from the current time', async () => {
    const store = new MemoryCoordinationStore({ keyPrefix: 'test:', name: 'mem', now });
    await store.setIfAbsent('lease', 'a', 100);
    clock += 90;
    expect(await store.compareAndExpire('lease', 'a', 100)).toBe(true);
    clock += 100;
    expect(await store.get('lease')).toBe('a');
    clock += 1;
    expect(await store.get('lease')).toBeNull();
  });

  it('keeps a fence forever', async () => {
    const store = new MemoryCoordinationStore({ keyPrefix: 'test:', name: 'mem', now });
    expect(await store.incrementFence('fence')).toBe(1);
    clock += 365 * 24 * 60 * 60 * 1000;
    expect(await store.incrementFence('fence')).toBe(2);
  });

  it('sweeps expired entries so abandoned leases do not accumulate', async () => {
    const keyspace = createMemoryKeyspace();
    const store = new MemoryCoordinationStore({ keyPrefix: 'test:', name: 'mem', now, keyspace });
    for (let i = 0; i < 1000; i++) await store.setIfAbsent(`lease-${i}`, 'a', 10);
    clock += 11;
    for (let i = 0; i < 24; i++) await store.setIfAbsent(`fresh-${i}`, 'a', 10);
    expect(keyspace.size).toBe(24);
  });

  it('gives each store its own keyspace unless one is shared', async () => {
    const a = new MemoryCoordinationStore({ keyPrefix: 'test:', name: 'a' });
    const b = new MemoryCoordinationStore({ keyPrefix: 'test:', name: 'b' });
    await a.setIfAbsent('k', 'a', 1000);
    expect(await b.get('k')).toBeNull();
  });
});
