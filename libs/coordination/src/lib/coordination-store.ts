import type { StoreReport } from '@apphost/contracts';

/** Longest key a caller may pass (the prefix is not counted). */
export const MAX_KEY_LENGTH = 512;
/** Longest value: coordination state is small; anything bigger belongs in a durable store. */
export const MAX_VALUE_LENGTH = 1024 * 1024;
/** Longest TTL: state here is ephemeral, so nothing may outlive a day. */
export const MAX_TTL_MS = 24 * 60 * 60 * 1000;
/** Most holders one slot key admits: slots bound concurrency, which is small. */
export const MAX_SLOT_CAPACITY = 100_000;

/** The outcome of `acquireSlot`: whether the holder has a slot now, and how many live slots the key holds. */
export interface SlotAcquisition {
  acquired: boolean;
  held: number;
}

/** Most windows one `admit` checks. */
export const MAX_ADMISSION_WINDOWS = 8;

/**
 * One sliding window of `admit` (the two-counter approximation): the current window's counter and the previous
 * one's. A request fits when `previous × (windowMs − elapsedMs) + current × windowMs ≤ limit × windowMs`, its own
 * count included in `current`.
 */
export interface AdmissionWindow {
  /** The current window's counter: counted by one when the request is admitted (an `increment` counter). */
  key: string;
  /** The previous window's counter, only read. */
  previousKey: string;
  /** 0 refuses every request. */
  limit: number;
  windowMs: number;
  /** How far into the current window the request is, 0 to `windowMs`. */
  elapsedMs: number;
  /** The TTL a new current counter gets (an existing one keeps its own). */
  ttlMs: number;
}

/** What `admit` asks in one atomic step, in this order; each part runs only if the one before it admitted. */
export interface Admission {
  windows: readonly AdmissionWindow[];
  /** One slot of at most `capacity` under `key`, as `acquireSlot` takes it. */
  slot: { key: string; holder: string; capacity: number; ttlMs: number };
  /** Set if absent once the slot is taken; when the key is held already the slot is given back (the windows keep their counts). */
  claim?: { key: string; value: string; ttlMs: number };
  /** A counter counted by one when a window or the slot refuses (never for a claim that collides). */
  refusals?: { key: string; ttlMs: number };
}

/** The outcome of `admit`. A refusal leaves nothing counted, held or claimed (but the refusal counter). */
export type AdmissionOutcome =
  | { admitted: true; held: number }
  /** The first window (its index in `windows`) that had no room; `current` is its count without this request. */
  | { admitted: false; refusedBy: 'window'; window: number; previous: number; current: number }
  | { admitted: false; refusedBy: 'slot'; held: number }
  /** The claim's key was held already: the windows counted the request, the slot was given back. */
  | { admitted: false; refusedBy: 'claim'; held: number };

/**
 * The port for shared ephemeral state (leases, View generations, idempotency records, session locks with
 * fencing tokens, rate limits). Every key is namespaced by the store's `keyPrefix`. Invalid arguments reject
 * with INVALID_ARGUMENT before any effect; an unreachable backend rejects with UNAVAILABLE (fail closed).
 */
export interface CoordinationStore {
  readonly kind: 'redis' | 'memory';
  /** True when the backend answers now. Never throws. */
  ping(): Promise<boolean>;
  /** Sets `key` to `value` with a TTL only if it is absent (SET NX PX). True when this call set it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** The current value, or null when absent or expired. */
  get(key: string): Promise<string | null>;
  /** Deletes `key` only while it holds `expected` (releasing a lease only as its holder). */
  compareAndDelete(key: string, expected: string): Promise<boolean>;
  /** Resets the TTL of `key` only while it holds `expected` (renewing a lease only as its holder). */
  compareAndExpire(key: string, expected: string, ttlMs: number): Promise<boolean>;
  /** Replaces the value of `key` with `value` and a fresh TTL only while it holds `expected` (a holder updating its own state). */
  compareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<boolean>;
  /**
   * The next fencing token for `key` (INCR): strictly increasing, starting at 1, never expiring. Use keys
   * distinct from lease keys; a key holding a non-integer rejects with FAILED_PRECONDITION.
   */
  incrementFence(key: string): Promise<number>;
  /**
   * Adds `by` (a safe integer, possibly negative) to the counter at `key` and returns the new value (INCRBY). A
   * counter without a TTL gets `ttlMs`; one that has a TTL keeps it, so a window counter expires with its window.
   * A key holding a non-integer rejects with FAILED_PRECONDITION.
   */
  increment(key: string, by: number, ttlMs: number): Promise<number>;
  /**
   * Takes one of at most `capacity` slots under `key` for `holder` (a bounded semaphore), for `ttlMs`: a slot whose
   * holder never releases it (a crashed process) stops counting once its TTL passes. Expired slots are dropped first;
   * a holder that already has a live slot keeps it (its TTL renewed) and counts once. A key holding something else
   * rejects with FAILED_PRECONDITION.
   */
  acquireSlot(key: string, holder: string, capacity: number, ttlMs: number): Promise<SlotAcquisition>;
  /** Gives `holder`'s slot under `key` back. True when this call released a live slot (so repeating it is harmless). */
  releaseSlot(key: string, holder: string): Promise<boolean>;
  /**
   * Rate windows, a slot and a claim in one atomic step (one round trip): every window counts the request or the
   * first full one refuses it (every count given back), then the slot is taken or refused (the counts given back),
   * then the claim is set if absent (or the slot given back). A window key holding a non-integer, or a slot key
   * holding something other than slots, rejects with FAILED_PRECONDITION and nothing counted.
   */
  admit(admission: Admission): Promise<AdmissionOutcome>;
  /**
   * The live keys that start with `prefix` (without the store's own `keyPrefix`), in no particular order. A scan,
   * not an index: meant for rare sweeps (a deletion cascade), never for a request path.
   */
  keysWithPrefix(prefix: string): Promise<string[]>;
  /** Readiness for `describe` and the readiness probe. Never throws. */
  report(): Promise<StoreReport>;
  /** Releases the connection; afterwards `ping()` is false and operations reject UNAVAILABLE. */
  close(): Promise<void>;
}
