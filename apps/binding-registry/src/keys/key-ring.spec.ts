import { randomBytes } from 'node:crypto';
import { createLogger } from '@apphost/runtime';
import type { KeyRow, KeysRepository } from '../store/keys.repository';
import { KeyRing } from './key-ring';

/** The ring's store in memory, counting reads: the unit under test is the ring's reuse of what it loaded. */
class MemoryKeys {
  rows: KeyRow[] = [];
  reads = 0;
  async all(): Promise<KeyRow[]> {
    this.reads++;
    return this.rows.map((r) => ({ ...r }));
  }
  async insertFirst(keyId: string, material: Buffer, wrapped: boolean): Promise<boolean> {
    if (this.rows.length > 0) return false;
    this.rows.push({ keyId, state: 'ACTIVE', material, wrapped, verifyUntil: null });
    return true;
  }
  async rotate(current: string, keyId: string, material: Buffer, wrapped: boolean, windowMs: number): Promise<boolean> {
    const active = this.rows.find((r) => r.keyId === current && r.state === 'ACTIVE');
    if (!active) return false;
    Object.assign(active, { state: 'VERIFYING', verifyUntil: new Date(Date.now() + windowMs) });
    this.rows.push({ keyId, state: 'ACTIVE', material, wrapped, verifyUntil: null });
    return true;
  }
  async retireExpired(): Promise<void> {
    for (const r of this.rows)
      if (r.state === 'VERIFYING' && r.verifyUntil && r.verifyUntil.getTime() <= Date.now()) Object.assign(r, { state: 'RETIRED', material: null });
  }
}

const logger = createLogger('binding-registry', 'key-ring-spec', 'silent');

async function ring(listening: boolean | undefined, windowMs = 60_000) {
  const keys = new MemoryKeys();
  const listener = listening === undefined ? undefined : { listening };
  const r = new KeyRing(keys as unknown as KeysRepository, randomBytes(32), windowMs, logger, listener);
  await r.init();
  keys.reads = 0;
  return { r, keys, listener };
}

describe('KeyRing reuse of the loaded ring', () => {
  it('derives from the loaded ring while listening and nothing was notified; a notification makes the next use reload', async () => {
    const { r, keys } = await ring(true);
    const first = await r.derive('domain', 'alice');
    expect(await r.derive('domain', 'alice')).toBe(first);
    expect(keys.reads).toBe(0);
    // Another replica rotates: its notice invalidates this copy, and the next derive uses the new active key.
    const active = keys.rows[0].keyId;
    await keys.rotate(active, 'k-next', randomBytes(32), false, 60_000);
    expect(await r.derive('domain', 'alice')).toBe(first); // no notice yet: the demoted key, still in its window
    r.invalidate();
    const after = await r.derive('domain', 'alice');
    expect(keys.reads).toBe(1);
    expect(after).not.toBe(first);
    expect(r.status().activeKeyId).toBe('k-next');
  });

  it('reloads on every use while the listener is not listening, or when there is none', async () => {
    for (const listening of [false, undefined]) {
      const { r, keys } = await ring(listening);
      await r.derive('domain', 'alice');
      await r.derive('domain', 'alice');
      expect(keys.reads).toBe(2);
    }
  });

  it('a gap reported while loading keeps the loaded ring stale', async () => {
    const { r, keys, listener } = await ring(true);
    listener!.listening = false;
    await r.derive('domain', 'bob'); // loaded while not listening: not trusted
    listener!.listening = true;
    await r.derive('domain', 'bob');
    await r.derive('domain', 'bob');
    expect(keys.reads).toBe(2);
  });

  it('reloads once a verifying key is past its window, which retires it in the store', async () => {
    const { r, keys } = await ring(true, 50);
    await r.rotate();
    keys.reads = 0;
    await r.derive('domain', 'carol');
    expect(keys.reads).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 80));
    await r.derive('domain', 'carol');
    expect(keys.reads).toBe(1);
    expect(keys.rows.filter((k) => k.state === 'RETIRED' && k.material === null)).toHaveLength(1);
  });

  it('signs with the key that is active in the store now, notice or not', async () => {
    const { r, keys } = await ring(true);
    await keys.rotate(keys.rows[0].keyId, 'k-now', randomBytes(32), false, 60_000);
    expect(await r.sign('binding-revision', 'digest')).toMatch(/^v1\.k-now\./);
  });
});
