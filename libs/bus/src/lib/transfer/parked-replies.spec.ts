import { ParkedReplies, type ParkedEnd } from './parked-replies';

const limits = { maxParkedBytes: 100, ttlMs: 5000, chunkBytes: 16 };

function store() {
  const ends: Array<{ label: string; end: ParkedEnd; bytes: number }> = [];
  return { parked: new ParkedReplies(limits, (label, end, bytes) => ends.push({ label, end, bytes })), ends };
}

const bytesOf = (n: number) => Uint8Array.from({ length: n }, (_, i) => i % 251);

describe('ParkedReplies', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('serves every chunk in any order and frees the reply once the last unread one is read', () => {
    const { parked, ends } = store();
    const result = parked.park('op', bytesOf(40));
    if (!result.parked) throw new Error('expected it parked');
    expect(result).toMatchObject({ totalBytes: 40, chunkBytes: 16, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const read = (index: number) => parked.read(result.transferId, index);
    expect(read(2)).toEqual({ chunk: bytesOf(40).subarray(32) });
    expect(read(0)).toEqual({ chunk: bytesOf(16) });
    expect(read(3)).toEqual({ missing: 'no-such-chunk' });
    expect(parked.parkedBytes).toBe(40);
    expect(read(1)).toEqual({ chunk: bytesOf(40).subarray(16, 32) });
    expect(parked.parkedBytes).toBe(0);
    expect(read(1)).toEqual({ missing: 'unknown-transfer' });
    expect(ends).toEqual([{ label: 'op', end: 'read', bytes: 40 }]);
  });

  it('refuses what does not fit beside the parked replies (with the time to the soonest expiry), and what could never fit', () => {
    const { parked } = store();
    expect(parked.park('a', bytesOf(60)).parked).toBe(true);
    jest.advanceTimersByTime(400);
    expect(parked.park('b', bytesOf(41))).toEqual({ parked: false, why: 'over-capacity', retryAfterMs: 4600 });
    expect(parked.park('c', bytesOf(40)).parked).toBe(true);
    expect(parked.park('d', bytesOf(101))).toEqual({ parked: false, why: 'larger-than-capacity' });
    expect(parked.parkedBytes).toBe(100);
  });

  it('frees an unread reply at its TTL, or sooner at its request deadline (plus a margin for clock skew)', () => {
    const { parked, ends } = store();
    parked.park('ttl', bytesOf(10));
    parked.park('deadline', bytesOf(20), Date.now() + 200);
    jest.advanceTimersByTime(1199);
    expect(ends).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(ends).toEqual([{ label: 'deadline', end: 'expired', bytes: 20 }]);
    expect(parked.parkedBytes).toBe(10);
    jest.advanceTimersByTime(3799);
    expect(parked.parkedBytes).toBe(10);
    jest.advanceTimersByTime(1);
    expect(parked.parkedBytes).toBe(0);
    expect(ends.map((e) => e.label)).toEqual(['deadline', 'ttl']);
  });

  it('tells when it is empty, and frees everything on clear', async () => {
    const { parked, ends } = store();
    await expect(parked.whenEmpty()).resolves.toBeUndefined();
    parked.park('a', bytesOf(10));
    parked.park('b', bytesOf(10));
    let empty = false;
    void parked.whenEmpty().then(() => (empty = true));
    parked.clear();
    await Promise.resolve();
    expect(empty).toBe(true);
    expect(ends.map((e) => e.end)).toEqual(['stopped', 'stopped']);
    expect(parked.parkedCount).toBe(0);
  });
});
