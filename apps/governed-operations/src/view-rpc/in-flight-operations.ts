import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { BusClient } from '@apphost/bus';
import { canonicalize } from '@apphost/canonical-json';
import { MAX_TTL_MS, type CoordinationStore } from '@apphost/coordination';
import {
  AppHostError,
  CONNECTION_GENERATION_GONE,
  ConnCancelCall,
  ConnectionReasons,
  GovernedReasons,
  VIEW_RPC_REQUESTS,
  type HostProfile,
  type JsonRpcId,
  type ViewRpcRequestMethod,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import type { Logger } from '@apphost/runtime';
import { describeFailure } from '../tool-batches/batch-plan';
import type { InFlightOperation, OperationRegistry, PendingOperation, ViewContext } from './ports';

export interface InFlightOperationsOptions {
  /** Added to the profile's longest operation for a live id's TTL: a crashed replica's ids free themselves after it. */
  marginMs?: number;
  /** How long a cancel keeps asking the owner (in the background) while the call has not reached it yet. */
  cancelRetryMs?: number;
  /** Bus timeout of one `conn.cancel-call`. */
  cancelTimeoutMs?: number;
}

const DEFAULTS = { marginMs: 30_000, cancelRetryMs: 2_000, cancelTimeoutMs: 5_000 } as const;

const liveRecordSchema = z.strictObject({
  v: z.literal(1),
  callId: z.string().regex(/^vc-[0-9a-f]{32}$/),
  method: z.enum(VIEW_RPC_REQUESTS),
  generation: z.strictObject({ generationId: z.uuid(), fence: z.number().int().min(1), ownerInstanceId: z.string().min(1) }).nullable(),
  /** `cancelled`: a `notifications/cancelled` won; the request answers `cancelled` whatever it produces. */
  state: z.enum(['live', 'cancelled']),
});
type LiveRecord = z.infer<typeof liveRecordSchema>;

/**
 * The live JSON-RPC id scope of each View generation, in the coordination store (`view-rpc-live:<digest>`, the digest
 * of the View id, its generation and the canonical id: the string "7" and the number 7 are different ids), so any
 * replica can cancel what another runs. A record is claimed with set-if-absent and holds the operation's `callId` and
 * where it runs; the terminal outcome is one atomic step on it: `settle` deletes it only while it is still `live`,
 * `cancel` turns it `cancelled` only while it is still `live` — whichever comes first wins. Its TTL bounds the longest
 * operation the profile allows (plus a margin), so the ids of a crashed replica come free on their own.
 */
export class InFlightOperations implements OperationRegistry {
  private readonly options: Required<InFlightOperationsOptions>;

  constructor(
    private readonly store: CoordinationStore,
    private readonly bus: BusClient,
    private readonly logger: Logger,
    options: InFlightOperationsOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  prepare(view: ViewContext, id: JsonRpcId, method: ViewRpcRequestMethod): PendingOperation {
    const { record } = view.view;
    const live: LiveRecord = { v: 1, callId: `vc-${randomBytes(16).toString('hex')}`, method, generation: record.generation, state: 'live' };
    const key = liveKeyOf(view, id);
    return {
      claim: { key, value: valueOf(live), ttlMs: this.ttlOf(view.profile) },
      claimed: () => new LiveOperation(this.store, key, live),
      inUse: () =>
        new AppHostError('INVALID_ARGUMENT', 'another request with this id is still in flight on this View', {
          details: GovernedReasons.details('RPC_ID_IN_USE', { id }),
        }),
    };
  }

  /** Claims the id on its own (the View RPC claims it with its admission: `RpcAdmission.admit`). */
  async begin(view: ViewContext, id: JsonRpcId, method: ViewRpcRequestMethod): Promise<InFlightOperation> {
    const pending = this.prepare(view, id, method);
    const { key, value, ttlMs } = pending.claim;
    if (!(await this.store.setIfAbsent(key, value, ttlMs))) throw pending.inUse();
    return pending.claimed();
  }

  async cancel(view: ViewContext, id: JsonRpcId): Promise<boolean> {
    const key = liveKeyOf(view, id);
    const raw = await this.store.get(key);
    const parsed = raw === null ? null : liveRecordSchema.safeParse(safeJson(raw));
    const log = { viewId: view.view.record.viewId, id };
    if (!parsed?.success || parsed.data.state !== 'live') {
      this.logger.info(
        { ...log, found: raw === null ? 'none' : parsed?.success ? parsed.data.state : 'unreadable' },
        'cancel ignored: no live request has this id',
      );
      return false;
    }
    const cancelled: LiveRecord = { ...parsed.data, state: 'cancelled' };
    if (!(await this.store.compareAndSet(key, raw as string, valueOf(cancelled), this.ttlOf(view.profile)))) {
      this.logger.info(log, 'cancel ignored: the request reached its outcome first');
      return false;
    }
    await this.cancelUpstream(key, cancelled, log);
    return true;
  }

  /** The longest a View operation may run: a call (with its state-only MRTR rounds) or a read, plus the margin. */
  private ttlOf(profile: HostProfile): number {
    const { callTimeoutMs, readTimeoutMs, mrtr } = profile.limits;
    return Math.min(Math.max(callTimeoutMs, readTimeoutMs, mrtr.maxTotalMs) + this.options.marginMs, MAX_TTL_MS);
  }

  /**
   * Asks the generation's owner to cancel the call. The cancel is recorded already, so nothing here fails it: a gone
   * generation has nothing left to cancel. An owner that has not received the call yet (the cancel overtook it in the
   * pipeline) is asked again in the background, bounded, while the operation is still unsettled.
   */
  private async cancelUpstream(key: string, cancelled: LiveRecord, log: Record<string, unknown>): Promise<void> {
    const { generation } = cancelled;
    if (!generation || (await this.askOwner(generation, cancelled.callId, log))) return;
    void this.keepAsking(key, cancelled, generation, log).catch((error: unknown) =>
      this.logger.warn({ ...log, callId: cancelled.callId, error: describeFailure(error) }, 'cancel: gave up asking the owner'),
    );
  }

  private async keepAsking(key: string, cancelled: LiveRecord, generation: NonNullable<LiveRecord['generation']>, log: Record<string, unknown>): Promise<void> {
    const giveUpAt = Date.now() + this.options.cancelRetryMs;
    for (let delay = 25; Date.now() + delay <= giveUpAt; delay = Math.min(delay * 2, 250)) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      if ((await this.store.get(key)) !== valueOf(cancelled)) return; // settled: nothing runs under this id any more
      if (await this.askOwner(generation, cancelled.callId, log)) return;
    }
  }

  /** True when nothing is left to ask: the owner cancelled the call, its generation is gone, or it cannot be asked. */
  private async askOwner(generation: NonNullable<LiveRecord['generation']>, callId: string, log: Record<string, unknown>): Promise<boolean> {
    try {
      const { cancelled } = await requestOnGeneration(this.bus, ConnCancelCall, generation, { callId }, { timeoutMs: this.options.cancelTimeoutMs });
      if (cancelled) this.logger.info({ ...log, callId }, 'cancelled the upstream call');
      return cancelled;
    } catch (error) {
      if (ConnectionReasons.of(error) === CONNECTION_GENERATION_GONE) this.logger.info({ ...log, callId }, 'cancel: the generation is gone');
      else this.logger.warn({ ...log, callId, error: describeFailure(error) }, 'cancel: the owner could not be asked to cancel the upstream call');
      return true;
    }
  }
}

/** One claimed id: `settle` is idempotent (a repeated call answers the first one's outcome). */
class LiveOperation implements InFlightOperation {
  readonly callId: string;
  private settled: Promise<boolean> | undefined;

  constructor(
    private readonly store: CoordinationStore,
    private readonly key: string,
    private readonly live: LiveRecord,
  ) {
    this.callId = live.callId;
  }

  settle(): Promise<boolean> {
    this.settled ??= this.finish().catch((error: unknown) => {
      this.settled = undefined; // the store failed: a retry may settle it
      throw error;
    });
    return this.settled;
  }

  async cancelled(): Promise<boolean> {
    return (await this.store.get(this.key)) === valueOf({ ...this.live, state: 'cancelled' });
  }

  private async finish(): Promise<boolean> {
    if (await this.store.compareAndDelete(this.key, valueOf(this.live))) return true;
    if (await this.store.compareAndDelete(this.key, valueOf({ ...this.live, state: 'cancelled' }))) return false;
    // Neither: the record outlived its TTL (longer than any operation may run) with no cancel seen; deliver.
    return true;
  }
}

/** The exact stored value (fixed member order: values are compared as strings). */
function valueOf(r: LiveRecord): string {
  const g = r.generation;
  const generation = g ? { generationId: g.generationId, fence: g.fence, ownerInstanceId: g.ownerInstanceId } : null;
  return JSON.stringify({ v: r.v, callId: r.callId, method: r.method, generation, state: r.state });
}

function liveKeyOf(view: ViewContext, id: JsonRpcId): string {
  const { viewId, viewGeneration } = view.view.record;
  return `view-rpc-live:${createHash('sha256').update(canonicalize({ viewId, viewGeneration, id })).digest('hex')}`;
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
