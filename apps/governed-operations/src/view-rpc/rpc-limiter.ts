import { randomUUID } from 'node:crypto';
import { MAX_TTL_MS, type AdmissionWindow, type CoordinationStore } from '@apphost/coordination';
import { AppHostError, GovernedReasons, type HostProfile } from '@apphost/contracts';
import { sessionDigestOf } from '../views/view-keys';
import type { PendingOperation, RpcAdmission, RpcSlot, ViewContext } from './ports';

/*
 * Keys (under the service's store prefix), shared by every replica:
 * - `view-rpc:rate:view:<viewId>:<minute>` and `view-rpc:rate:session:<sessionDigest>:<minute>`: requests admitted in
 *   one clock minute (a counter that dies two minutes after its minute ended).
 * - `view-rpc:rate:message:<viewId>:<minute>`: `ui/message`s of one View (`MinuteWindows`, counted by `ViewMessages`).
 * - `view-rpc:queue:<viewId>`: the View's admitted, not yet released operations (slots, each with its own TTL).
 * - `view-rpc:refused:<viewId>`: how many requests of the View the limiter refused (rate or queue depth); refusals are
 *   counted here, not audited one by one (a flood of them would be a ledger write per request).
 */
const WINDOW_MS = 60_000;
/** A minute's counter is read while its minute is the current one and throughout the next (as the previous one). */
const WINDOW_TTL_MS = 3 * WINDOW_MS;
/** What an operation may spend beyond its profile's longest call (queueing, the barrier, auditing). */
const SLOT_GRACE_MS = 60_000;
/** The shortest wait a refusal suggests: concurrent admissions can refuse when a slot frees a moment later. */
const MIN_RETRY_AFTER_MS = 100;

/** One sliding one-minute window: `key` is its counters' prefix; `scope` names it in a refusal. */
export interface RateWindow {
  scope: 'view' | 'session' | 'message';
  key: string;
  limit: number;
}

/**
 * Admission by rate and queue depth, before anything is queued. Rate is a sliding window of one minute per View and
 * per session: this minute's count plus last minute's weighted by how much of it still overlaps the last 60 s (the
 * usual two-counter approximation: no burst of twice the limit across a minute boundary). Only admitted requests
 * count: a refused one gives its increments back, so `retryAfterMs` is when a request will be admitted.
 *
 * Queue depth is a slot per admitted operation until `release`. A replica that crashes holding slots never releases
 * them: each slot expires on its own after the longest operation the View's profile allows (`callTimeoutMs`,
 * `readTimeoutMs`, MRTR `maxTotalMs`) plus a grace, so a crash costs the View at most that long of those slots.
 *
 * Both windows, the slot, the request's live id (`PendingOperation`) and the refusal count are one atomic step of
 * the store (`CoordinationStore.admit`: one round trip), decided in that order.
 */
export class RpcLimiter implements RpcAdmission {
  constructor(
    private readonly store: CoordinationStore,
    private readonly clock: () => number = Date.now,
  ) {}

  async admit({ view, profile, policy }: ViewContext, pending?: PendingOperation): Promise<RpcSlot> {
    const { viewId, session } = view.record;
    const windows: RateWindow[] = [
      { scope: 'view', key: `view-rpc:rate:view:${viewId}`, limit: policy.rpc.perViewPerMinute },
      { scope: 'session', key: `view-rpc:rate:session:${sessionDigestOf(session)}`, limit: policy.rpc.perSessionPerMinute },
    ];
    const now = this.clock();
    const slot = { key: `view-rpc:queue:${viewId}`, holder: randomUUID(), capacity: policy.rpc.queueDepth, ttlMs: slotTtlOf(profile) };
    const outcome = await this.store.admit({
      windows: windows.map((window) => admissionWindowOf(window, now)),
      slot,
      ...(pending ? { claim: pending.claim } : {}),
      refusals: { key: refusalsKeyOf(viewId), ttlMs: MAX_TTL_MS },
    });
    if (outcome.admitted) return slotOf(this.store, slot.key, slot.holder);
    switch (outcome.refusedBy) {
      case 'window': {
        const { scope, limit } = windows[outcome.window] as RateWindow;
        throw rateLimited(scope, limit, outcome.previous, outcome.current, elapsedOf(now));
      }
      case 'slot':
        throw new AppHostError('RESOURCE_EXHAUSTED', `the View already has ${outcome.held} operations in progress`, {
          retryable: true,
          details: GovernedReasons.details('RPC_QUEUE_FULL', { queueDepth: slot.capacity, held: outcome.held }),
        });
      case 'claim':
        // Only asked with a pending operation.
        throw (pending as PendingOperation).inUse();
    }
  }

  /** How many requests of the View were refused (within the counter's TTL, from its first refusal). */
  async refusals(viewId: string): Promise<number> {
    return Number((await this.store.get(refusalsKeyOf(viewId))) ?? 0);
  }
}

const refusalsKeyOf = (viewId: string) => `view-rpc:refused:${viewId}`;

/**
 * A held slot: released once (later calls share the first). A release that cannot reach the store is left to the
 * slot's TTL (and may be tried again by calling `release` once more), so it never turns an operation's outcome into
 * a store error.
 */
function slotOf(store: CoordinationStore, key: string, holder: string): RpcSlot {
  let released: Promise<void> | null = null;
  return {
    release: () =>
      (released ??= store.releaseSlot(key, holder).then(
        () => undefined,
        () => {
          released = null;
        },
      )),
  };
}

/** A window as the store checks it at `now`: this minute's counter against the previous minute's. */
function admissionWindowOf({ key, limit }: RateWindow, now: number): AdmissionWindow {
  const minute = Math.floor(now / WINDOW_MS);
  return { key: `${key}:${minute}`, previousKey: `${key}:${minute - 1}`, limit, windowMs: WINDOW_MS, elapsedMs: elapsedOf(now), ttlMs: WINDOW_TTL_MS };
}

const elapsedOf = (now: number) => now - Math.floor(now / WINDOW_MS) * WINDOW_MS;

/** RESOURCE_EXHAUSTED `RPC_RATE_LIMITED`, with when one more request fits (`current`: the count without this one). */
function rateLimited(scope: RateWindow['scope'], limit: number, previous: number, current: number, elapsedMs: number): AppHostError {
  const retryAfterMs = retryAfterOf(previous, current, limit, elapsedMs);
  return new AppHostError(
    'RESOURCE_EXHAUSTED',
    `more than ${limit} ${scope === 'message' ? 'messages a minute from this View' : `requests a minute for this ${scope}`}`,
    {
      retryable: true,
      details: GovernedReasons.details('RPC_RATE_LIMITED', { scope, limit, retryAfterMs }),
    },
  );
}

/**
 * Sliding one-minute windows in the coordination store (see `RpcLimiter`): `count` admits one more or refuses with
 * RESOURCE_EXHAUSTED `RPC_RATE_LIMITED` (`retryAfterMs`), giving its increment back.
 */
export class MinuteWindows {
  constructor(private readonly store: CoordinationStore) {}

  /** Counts one request in the window's current minute, or refuses (its increment given back) when over the limit. */
  async count({ scope, key, limit }: RateWindow, now: number): Promise<string> {
    const minute = Math.floor(now / WINDOW_MS);
    const currentKey = `${key}:${minute}`;
    const [counted, read] = await Promise.allSettled([this.store.increment(currentKey, 1, WINDOW_TTL_MS), this.store.get(`${key}:${minute - 1}`)]);
    if (counted.status === 'rejected') throw counted.reason;
    const current = counted.value;
    if (read.status === 'rejected') {
      await this.uncount(currentKey);
      throw read.reason;
    }
    const previous = Number(read.value ?? 0);
    const elapsedMs = now - minute * WINDOW_MS;
    // previous × (1 − elapsed/minute) + current ≤ limit, in whole numbers (no rounding at the boundary).
    if (previous * (WINDOW_MS - elapsedMs) + current * WINDOW_MS <= limit * WINDOW_MS) return currentKey;
    await this.uncount(currentKey);
    throw rateLimited(scope, limit, previous, current - 1, elapsedMs);
  }

  /** Gives one count back; if the store cannot be reached the window simply ends with it counted. */
  uncount(key: string): Promise<unknown> {
    return this.store.increment(key, -1, WINDOW_TTL_MS).catch(() => undefined);
  }
}

/** How long a slot lives: past the longest operation the profile allows, bounded by the store's longest TTL. */
export function slotTtlOf(profile: HostProfile): number {
  const { callTimeoutMs, readTimeoutMs, mrtr } = profile.limits;
  return Math.min(24 * 3600_000, Math.max(callTimeoutMs, readTimeoutMs, mrtr.maxTotalMs) + SLOT_GRACE_MS);
}

/**
 * When one more request fits: the first moment `previous × (1 − elapsed) + current + 1 ≤ limit`, in this minute (the
 * previous minute's weight falls) or in the next one (this minute's count becomes the weighted previous one).
 */
function retryAfterOf(previous: number, current: number, limit: number, elapsedMs: number): number {
  const room = limit - 1 - current;
  // In this minute, once the previous minute's weighted count is down to `room` (never, when there is no room)...
  const inThisMinute = room < 0 ? Infinity : previous <= room ? elapsedMs : WINDOW_MS - (room * WINDOW_MS) / previous;
  // ...or in the next one, once this minute's count, weighted as the previous, is down to `limit - 1`.
  const inNextMinute = WINDOW_MS + (current <= limit - 1 ? 0 : WINDOW_MS - ((limit - 1) * WINDOW_MS) / current);
  return Math.max(MIN_RETRY_AFTER_MS, Math.ceil(Math.min(inThisMinute, inNextMinute) - elapsedMs));
}
