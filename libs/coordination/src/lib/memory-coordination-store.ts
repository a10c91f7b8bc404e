import type { StoreReport } from '@apphost/contracts';
import type { Admission, AdmissionOutcome, AdmissionWindow, CoordinationStore, SlotAcquisition } from './coordination-store';
import {
  checkAdmission,
  checkCapacity,
  checkDelta,
  checkHolder,
  checkKey,
  checkKeyPrefix,
  checkName,
  checkTtl,
  checkValue,
  notAnInteger,
  notSlots,
  unavailable,
} from './validation';

export interface MemoryEntry {
  value: string;
  /** Epoch ms at which the entry stops existing; null for fences, which never expire. */
  expiresAt: number | null;
  /** A slots key (`acquireSlot`): each holder's expiry, epoch ms (`value` is then empty). */
  slots?: Map<string, number>;
}

/** A keyspace several memory stores may share, as several Redis clients share one server. */
export type MemoryKeyspace = Map<string, MemoryEntry>;

export function createMemoryKeyspace(): MemoryKeyspace {
  return new Map();
}

export interface MemoryCoordinationStoreOptions {
  keyPrefix: string;
  name: string;
  /** Wall clock for TTLs; tests inject a fake one. */
  now?: () => number;
  /** Defaults to a private keyspace. */
  keyspace?: MemoryKeyspace;
}

/** Sweep expired entries every this many writes, so dead leases cannot pile up in a long-running plane. */
const SWEEP_EVERY_WRITES = 1024;

/**
 * The in-process store the all-in-one development plane runs on: the same contract and semantics as Redis
 * (SET NX PX, compare-and-delete, compare-and-expire, INCR that keeps any TTL), in a single process.
 */
export class MemoryCoordinationStore implements CoordinationStore {
  readonly kind = 'memory' as const;
  private readonly keyPrefix: string;
  private readonly name: string;
  private readonly now: () => number;
  private readonly keyspace: MemoryKeyspace;
  private writes = 0;
  private closed = false;

  constructor(options: MemoryCoordinationStoreOptions) {
    this.keyPrefix = checkKeyPrefix(options.keyPrefix);
    this.name = checkName(options.name);
    this.now = options.now ?? Date.now;
    this.keyspace = options.keyspace ?? createMemoryKeyspace();
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    const k = this.key(key);
    checkValue(value);
    checkTtl(ttlMs);
    this.ensureOpen('setIfAbsent');
    if (this.live(k)) return false;
    this.write(k, { value, expiresAt: this.now() + ttlMs });
    return true;
  }

  async get(key: string): Promise<string | null> {
    const k = this.key(key);
    this.ensureOpen('get');
    return this.live(k)?.value ?? null;
  }

  async compareAndDelete(key: string, expected: string): Promise<boolean> {
    const k = this.key(key);
    checkValue(expected);
    this.ensureOpen('compareAndDelete');
    if (this.live(k)?.value !== expected) return false;
    this.keyspace.delete(k);
    return true;
  }

  async compareAndExpire(key: string, expected: string, ttlMs: number): Promise<boolean> {
    const k = this.key(key);
    checkValue(expected);
    checkTtl(ttlMs);
    this.ensureOpen('compareAndExpire');
    const entry = this.live(k);
    if (entry?.value !== expected) return false;
    entry.expiresAt = this.now() + ttlMs;
    return true;
  }

  async compareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    const k = this.key(key);
    checkValue(expected);
    checkValue(value);
    checkTtl(ttlMs);
    this.ensureOpen('compareAndSet');
    if (this.live(k)?.value !== expected) return false;
    this.write(k, { value, expiresAt: this.now() + ttlMs });
    return true;
  }

  async incrementFence(key: string): Promise<number> {
    const k = this.key(key);
    this.ensureOpen('incrementFence');
    const entry = this.live(k);
    // Redis INCR accepts only a canonical signed 64-bit decimal; this accepts the same strings in safe range.
    const current = entry ? Number(entry.value) : 0;
    if (entry && (!/^-?(0|[1-9][0-9]*)$/.test(entry.value) || !Number.isSafeInteger(current + 1))) throw notAnInteger(key);
    const next = current + 1;
    // Like INCR: a new key never expires, an existing key keeps its TTL.
    this.write(k, { value: String(next), expiresAt: entry?.expiresAt ?? null });
    return next;
  }

  async increment(key: string, by: number, ttlMs: number): Promise<number> {
    const k = this.key(key);
    checkDelta(by);
    checkTtl(ttlMs);
    this.ensureOpen('increment');
    return this.incrementNow(k, key, by, ttlMs);
  }

  async acquireSlot(key: string, holder: string, capacity: number, ttlMs: number): Promise<SlotAcquisition> {
    const k = this.key(key);
    checkHolder(holder);
    checkCapacity(capacity);
    checkTtl(ttlMs);
    this.ensureOpen('acquireSlot');
    return this.acquireSlotNow(k, key, holder, capacity, ttlMs);
  }

  async releaseSlot(key: string, holder: string): Promise<boolean> {
    const k = this.key(key);
    checkHolder(holder);
    this.ensureOpen('releaseSlot');
    const entry = this.live(k);
    if (!entry) return false;
    if (!entry.slots) throw notSlots(key);
    const expiresAt = entry.slots.get(holder);
    if (expiresAt === undefined) return false;
    entry.slots.delete(holder);
    if (entry.slots.size === 0) this.keyspace.delete(k);
    return this.now() <= expiresAt;
  }

  // Synchronous from the checks to the last write, so no other call on the keyspace comes between (as one script).
  async admit(admission: Admission): Promise<AdmissionOutcome> {
    const { windows, slot, claim, refusals } = checkAdmission(admission);
    const k = (key: string) => this.key(key);
    this.ensureOpen('admit');
    // Every key is checked before anything is counted, so a key of the wrong kind leaves no effect.
    for (const w of windows) {
      if (!this.isCounter(this.live(k(w.key)))) throw notAnInteger(w.key);
      if (!this.isCounter(this.live(k(w.previousKey)))) throw notAnInteger(w.previousKey);
    }
    const slotEntry = this.live(k(slot.key));
    if (slotEntry && !slotEntry.slots) throw notSlots(slot.key);
    const refused = (outcome: AdmissionOutcome): AdmissionOutcome => {
      // Best effort, as the script's: a refusal counter of the wrong kind is left alone.
      if (refusals && this.isCounter(this.live(k(refusals.key)))) this.incrementNow(k(refusals.key), refusals.key, 1, refusals.ttlMs);
      return outcome;
    };
    const counted: AdmissionWindow[] = [];
    const giveBack = () => counted.forEach((w) => this.incrementNow(k(w.key), w.key, -1, w.ttlMs));
    for (const [index, w] of windows.entries()) {
      const current = this.incrementNow(k(w.key), w.key, 1, w.ttlMs);
      counted.push(w);
      const previous = Number(this.live(k(w.previousKey))?.value ?? 0);
      if (previous * (w.windowMs - w.elapsedMs) + current * w.windowMs > w.limit * w.windowMs) {
        giveBack();
        return refused({ admitted: false, refusedBy: 'window', window: index, previous, current: current - 1 });
      }
    }
    const had = slotEntry?.slots?.has(slot.holder) ?? false;
    const { acquired, held } = this.acquireSlotNow(k(slot.key), slot.key, slot.holder, slot.capacity, slot.ttlMs);
    if (!acquired) {
      giveBack();
      return refused({ admitted: false, refusedBy: 'slot', held });
    }
    if (claim && this.live(k(claim.key))) {
      if (had) return { admitted: false, refusedBy: 'claim', held };
      const slots = this.live(k(slot.key))?.slots;
      slots?.delete(slot.holder);
      if (slots?.size === 0) this.keyspace.delete(k(slot.key));
      return { admitted: false, refusedBy: 'claim', held: held - 1 };
    }
    if (claim) this.write(k(claim.key), { value: claim.value, expiresAt: this.now() + claim.ttlMs });
    return { admitted: true, held };
  }

  async keysWithPrefix(prefix: string): Promise<string[]> {
    const start = this.key(prefix);
    this.ensureOpen('keysWithPrefix');
    return [...this.keyspace.keys()].filter((k) => k.startsWith(start) && this.live(k)).map((k) => k.slice(this.keyPrefix.length));
  }

  async report(): Promise<StoreReport> {
    return { kind: 'memory', name: this.name, ready: await this.ping() };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private key(key: string): string {
    return this.keyPrefix + checkKey(key);
  }

  private ensureOpen(operation: string): void {
    if (this.closed) throw unavailable({ store: this.name, operation, cause: 'store is closed' });
  }

  private incrementNow(k: string, key: string, by: number, ttlMs: number): number {
    const entry = this.live(k);
    const next = (entry ? Number(entry.value) : 0) + by;
    if (!this.isCounter(entry) || !Number.isSafeInteger(next)) throw notAnInteger(key);
    // Like the Redis script: a counter without a TTL gets one, one with a TTL keeps it.
    this.write(k, { value: String(next), expiresAt: entry?.expiresAt ?? this.now() + ttlMs });
    return next;
  }

  private acquireSlotNow(k: string, key: string, holder: string, capacity: number, ttlMs: number): SlotAcquisition {
    const entry = this.live(k);
    if (entry && !entry.slots) throw notSlots(key);
    const now = this.now();
    const slots = entry?.slots ?? new Map<string, number>();
    for (const [h, expiresAt] of slots) if (now > expiresAt) slots.delete(h);
    if (!slots.has(holder) && slots.size >= capacity) return { acquired: false, held: slots.size };
    slots.set(holder, now + ttlMs);
    this.write(k, { value: '', expiresAt: Math.max(entry?.expiresAt ?? 0, now + ttlMs), slots });
    return { acquired: true, held: slots.size };
  }

  /** Absent, or an integer counter (what INCRBY and GET-as-a-number accept). */
  private isCounter(entry: MemoryEntry | undefined): boolean {
    return !entry || (!entry.slots && /^-?(0|[1-9][0-9]*)$/.test(entry.value));
  }

  /** The entry if it exists and has not expired; expired entries are dropped on sight, so they act as absent. */
  private live(k: string): MemoryEntry | undefined {
    const entry = this.keyspace.get(k);
    // Redis treats a key as expired once the clock is past its deadline; so does this.
    if (entry && entry.expiresAt !== null && this.now() > entry.expiresAt) {
      this.keyspace.delete(k);
      return undefined;
    }
    return entry;
  }

  private write(k: string, entry: MemoryEntry): void {
    this.keyspace.set(k, entry);
    if (++this.writes % SWEEP_EVERY_WRITES === 0) {
      const now = this.now();
      for (const [key, e] of this.keyspace) if (e.expiresAt !== null && now > e.expiresAt) this.keyspace.delete(key);
    }
  }
}
