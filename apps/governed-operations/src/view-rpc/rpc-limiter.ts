import { randomUUID } from 'node:crypto';
import type { CoordinationStore } from '@apphost/coordination';
import { AppHostError, GovernedReasons, type HostProfile } from '@apphost/contracts';
import { sessionDigestOf } from '../views/view-keys';
import type { RpcAdmission, RpcSlot, ViewContext } from './ports';

/*
 * Keys (under the service's store prefix), shared by every replica:
 * - `view-rpc:rate:view:<viewId>:<minute>` and `view-rpc:rate:session:<sessionDigest>:<minute>`: requests admitted in
 *   one clock minute (a counter that dies two minutes after its minute ended).
 * - `view-rpc:rate:message:<viewId>:<minute>`: `ui/message`s of one View (`MinuteWindows`, counted by `ViewMessages`).
 * - `view-rpc:queue:<viewId>`: the View's admitted, not yet released operations (slots, each with its own TTL).
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
 */
export class RpcLimiter implements RpcAdmission {
  private readonly windows: MinuteWindows;

  constructor(
    private readonly store: CoordinationStore,
    private readonly clock: () => number = Date.now,
  ) {
    this.windows = new MinuteWindows(store);
  }

  async admit({ view, profile, policy }: ViewContext): Promise<RpcSlot> {
    const { viewId, session } = view.record;
    const windows: RateWindow[] = [
      { scope: 'view', key: `view-rpc:rate:view:${viewId}`, limit: policy.rpc.perViewPerMinute },
      { scope: 'session', key: `view-rpc:rate:session:${sessionDigestOf(session)}`, limit: policy.rpc.perSessionPerMinute },
    ];
    const now = this.clock();
    // Both windows at once (one round trip each, in parallel); a refusal by either gives the other's count back.
    const outcomes = await Promise.allSettled(windows.map((window) => this.windows.count(window, now)));
    const counted = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const refused = outcomes.find((o) => o.status === 'rejected');
    try {
      if (refused) throw refused.reason;
      return await this.takeSlot(viewId, policy.rpc.queueDepth, slotTtlOf(profile));
    } catch (error) {
      await Promise.all(counted.map((key) => this.windows.uncount(key)));
      throw error;
    }
  }

  private async takeSlot(viewId: string, queueDepth: number, ttlMs: number): Promise<RpcSlot> {
    const key = `view-rpc:queue:${viewId}`;
    const holder = randomUUID();
    const { acquired, held } = await this.store.acquireSlot(key, holder, queueDepth, ttlMs);
    if (!acquired) {
      throw new AppHostError('RESOURCE_EXHAUSTED', `the View already has ${held} operations in progress`, {
        retryable: true,
        details: GovernedReasons.details('RPC_QUEUE_FULL', { queueDepth, held }),
      });
    }
    let released: Promise<void> | null = null;
    return {
      // Once: later calls share the first. A release that cannot reach the store is left to the slot's TTL (and may
      // be tried again by calling `release` once more), so it never turns an operation's outcome into a store error.
      release: () =>
        (released ??= this.store.releaseSlot(key, holder).then(
          () => undefined,
          () => {
            released = null;
          },
        )),
    };
  }
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
    const retryAfterMs = retryAfterOf(previous, current - 1, limit, elapsedMs);
    throw new AppHostError(
      'RESOURCE_EXHAUSTED',
      `more than ${limit} ${scope === 'message' ? 'messages a minute from this View' : `requests a minute for this ${scope}`}`,
      {
        retryable: true,
        details: GovernedReasons.details('RPC_RATE_LIMITED', { scope, limit, retryAfterMs }),
      },
    );
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
