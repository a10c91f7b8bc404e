import type { Logger } from '@apphost/runtime';
import { canonicalize } from '@apphost/canonical-json';
import { systemClock, type CancelScheduled, type Clock, type McpConnection } from '@apphost/mcp';
import { AppHostError, RegistryReasons, type SessionKey } from '@apphost/contracts';
import type { RegistryMetrics } from '../registry.metrics';
import type { GenerationRow, GenerationsRepository } from '../store/generations.repository';
import { generationGone } from './generation-errors';
import type { GenerationPolicy } from './generation-policy';

/** The session a generation is keyed by (none under per-principal affinity): what the deletion cascade ends. */
export interface SessionScope {
  key: SessionKey;
  incarnation: number;
}

/** The per-instance cap on live generations (each may be a server process), and where their count is reported. */
export interface LiveGenerationCap {
  max: number;
  metrics: RegistryMetrics;
}

export interface LocalGeneration {
  row: GenerationRow;
  policy: GenerationPolicy;
  /** `canonicalize(session key)` and incarnation; in memory only, never in rows or logs. */
  session: { identity: string; incarnation: number } | null;
  opening: Promise<McpConnection>;
  connection?: McpConnection;
  leases: Map<string, { kind: string; id: string }>;
  inflight: number;
  calls: Map<string, AbortController>;
  ended?: string;
  cancelIdleTimer?: CancelScheduled;
  cancelLifetimeTimer?: CancelScheduled;
}

/** A generation's references by holder kind and its in-flight operations: evictable when both are none. */
export interface GenerationState {
  references: number;
  byHolderKind: Record<string, number>;
  inflight: number;
  evictable: boolean;
}

/**
 * The connection generations this process owns: the live MCP connections, their references (leases held by
 * Views, reservations, runners; in-flight operations), idle eviction and maximum lifetime. Ending a generation
 * closes its connection and marks its directory row (guarded by the fence); it never comes back. Both timers run on
 * `clock` (real time in a service; a test advances a manual clock instead of waiting). At most `cap.max` are live
 * (or being claimed) at once; deleting a session ends its generations at once.
 */
export class LocalGenerations {
  private readonly generations = new Map<string, LocalGeneration>();
  /** Why recently ended generations ended (bounded): callers learn IDLE_EVICTED, MAX_LIFETIME, … instead of a bare NOT_OWNED_HERE. */
  private readonly endedReasons = new Map<string, { fence: number; reason: string }>();
  /** Claims between their capacity check and `add`: they count against the cap, so concurrent acquires cannot overshoot it. */
  private pendingClaims = 0;

  constructor(
    private readonly repository: Pick<GenerationsRepository, 'end'>,
    private readonly logger: Logger,
    /** Whether this process may serve `row` now: its lease is valid and the row was claimed by its current incarnation. */
    private readonly ownershipValid: (row: GenerationRow) => boolean,
    private readonly cap: LiveGenerationCap,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * Holds one slot of the cap for a claim about to be made; the returned function gives it back (call it once the
   * claim is added or lost). RESOURCE_EXHAUSTED (retryable) when every slot is taken.
   */
  reserveSlot(): () => void {
    if (this.generations.size + this.pendingClaims >= this.cap.max) {
      this.cap.metrics.acquireRefusals.inc({ reason: 'LIVE_GENERATIONS_EXHAUSTED' });
      throw new AppHostError('RESOURCE_EXHAUSTED', `this registry instance already holds its maximum of ${this.cap.max} live connection generations`, {
        retryable: true,
        details: RegistryReasons.details('LIVE_GENERATIONS_EXHAUSTED', { limit: this.cap.max }),
      });
    }
    this.pendingClaims++;
    let held = true;
    return () => {
      if (held) this.pendingClaims--;
      held = false;
    };
  }

  add(row: GenerationRow, policy: GenerationPolicy, session: SessionScope | null, open: (onClosed: () => void) => Promise<McpConnection>): LocalGeneration {
    const local: LocalGeneration = {
      row,
      policy,
      session: session && { identity: canonicalize(session.key), incarnation: session.incarnation },
      leases: new Map(),
      inflight: 0,
      calls: new Map(),
      opening: undefined as unknown as Promise<McpConnection>,
    };
    local.opening = open(() => void this.end(local, 'GONE', 'TRANSPORT_CLOSED')).then(
      (connection) => {
        local.connection = connection;
        if (local.ended) void connection.close();
        return connection;
      },
      async (error: unknown) => {
        await this.end(local, 'CLOSED', 'OPEN_FAILED');
        throw error;
      },
    );
    local.opening.catch(() => undefined);
    local.cancelLifetimeTimer = this.clock.schedule(policy.maxLifetimeMs, () => void this.end(local, 'CLOSED', 'MAX_LIFETIME'));
    this.generations.set(row.generationId, local);
    this.cap.metrics.liveGenerations.set(this.generations.size);
    this.logger.info(
      {
        generationId: row.generationId,
        fence: row.fence,
        toolsetId: row.toolsetId,
        bindingGeneration: row.bindingGeneration,
        connectionClass: row.connectionClass,
        advertisesUi: row.advertisesUi,
      },
      'connection generation claimed',
    );
    return local;
  }

  /** The generation named by `ref`, or CONNECTION_GENERATION_GONE (unknown here, other fence, ended, or ownership lost). */
  get(ref: { generationId: string; fence: number }): LocalGeneration {
    const local = this.generations.get(ref.generationId);
    if (!local || local.ended) throw generationGone(ref.generationId, local?.ended ?? this.endedReasons.get(ref.generationId)?.reason ?? 'NOT_OWNED_HERE');
    if (local.row.fence !== ref.fence) throw generationGone(ref.generationId, 'FENCE_MISMATCH');
    if (!this.ownershipValid(local.row)) throw generationGone(ref.generationId, 'OWNERSHIP_LEASE_LAPSED');
    return local;
  }

  /** Runs one operation as an in-flight reference; a connection that died underneath ends the generation. */
  async run<T>(ref: { generationId: string; fence: number }, work: (connection: McpConnection, local: LocalGeneration) => Promise<T>): Promise<T> {
    const local = this.get(ref);
    local.inflight++;
    this.cancelIdle(local);
    let handedOver = false;
    try {
      const connection = local.connection ?? (await local.opening);
      handedOver = true;
      return await work(connection, local);
    } catch (error) {
      if (connectionClosed(error) || local.ended)
        throw generationGone(ref.generationId, local.ended ?? 'TRANSPORT_CLOSED', undefined, { inFlight: handedOver });
      throw error;
    } finally {
      local.inflight--;
      this.maybeIdle(local);
    }
  }

  async retain(ref: { generationId: string; fence: number }, leaseId: string, holder: { kind: string; id: string }): Promise<number> {
    const local = this.get(ref);
    local.leases.set(leaseId, holder);
    this.cancelIdle(local);
    try {
      await local.opening;
    } catch (error) {
      local.leases.delete(leaseId);
      throw error;
    }
    if (local.ended) throw generationGone(ref.generationId, local.ended);
    return local.leases.size;
  }

  /**
   * What holds `ref` now, without touching it: asking is not an operation (no in-flight count, no idle restart), so
   * a caller can watch a generation become evictable and then end.
   */
  state(ref: { generationId: string; fence: number }): GenerationState {
    const local = this.get(ref);
    const byHolderKind: Record<string, number> = {};
    for (const holder of local.leases.values()) byHolderKind[holder.kind] = (byHolderKind[holder.kind] ?? 0) + 1;
    return { references: local.leases.size, byHolderKind, inflight: local.inflight, evictable: local.leases.size === 0 && local.inflight === 0 };
  }

  /** Token-idempotent: a second release of the same lease changes nothing. The last release makes it evictable. */
  release(ref: { generationId: string; fence: number }, leaseId: string): { released: boolean; references: number } {
    const local = this.get(ref);
    const released = local.leases.delete(leaseId);
    this.maybeIdle(local);
    return { released, references: local.leases.size };
  }

  async closeBinding(toolsetId: string, bindingGeneration: number, scope: 'advertising' | 'all'): Promise<number> {
    const targets = [...this.generations.values()].filter(
      (g) => !g.ended && g.row.toolsetId === toolsetId && g.row.bindingGeneration === bindingGeneration && (scope === 'all' || g.row.advertisesUi),
    );
    await Promise.all(targets.map((g) => this.end(g, 'CLOSED', 'BINDING_REVOKED')));
    // Non-advertising generations of a replaced binding drain: no new references, closed at the last release.
    for (const g of this.generations.values())
      if (!g.ended && g.row.toolsetId === toolsetId && g.row.bindingGeneration === bindingGeneration) this.maybeIdle(g, 0);
    return targets.length;
  }

  /** Ends every generation keyed by the session at or below `incarnation` (it was deleted): their servers exit now. */
  async endSession(key: SessionKey, incarnation: number): Promise<number> {
    const identity = canonicalize(key);
    const targets = [...this.generations.values()].filter((g) => !g.ended && g.session?.identity === identity && g.session.incarnation <= incarnation);
    await Promise.all(targets.map((g) => this.end(g, 'CLOSED', 'SESSION_DELETED')));
    return targets.length;
  }

  async endAll(state: 'CLOSED' | 'GONE', reason: string): Promise<void> {
    await Promise.all([...this.generations.values()].map((g) => this.end(g, state, reason)));
  }

  cancelCall(ref: { generationId: string; fence: number }, callId: string): boolean {
    const controller = this.get(ref).calls.get(callId);
    controller?.abort('cancelled by the caller');
    return controller !== undefined;
  }

  get size(): number {
    return [...this.generations.values()].filter((g) => !g.ended).length;
  }

  private async end(local: LocalGeneration, state: 'CLOSED' | 'GONE', reason: string): Promise<void> {
    if (local.ended) return;
    local.ended = reason;
    this.cancelIdle(local);
    local.cancelLifetimeTimer?.();
    for (const controller of local.calls.values()) controller.abort(reason);
    this.generations.delete(local.row.generationId);
    this.cap.metrics.liveGenerations.set(this.generations.size);
    this.endedReasons.set(local.row.generationId, { fence: local.row.fence, reason });
    if (this.endedReasons.size > ENDED_REASONS_KEPT) this.endedReasons.delete(this.endedReasons.keys().next().value as string);
    await local.connection?.close().catch(() => undefined);
    await this.repository
      .end(local.row.generationId, local.row.fence, state, reason)
      .catch((err: unknown) => this.logger.warn({ err, generationId: local.row.generationId }, 'could not record the end of a generation'));
    this.logger.info({ generationId: local.row.generationId, fence: local.row.fence, state, reason }, 'connection generation ended');
  }

  private maybeIdle(local: LocalGeneration, delayMs = local.policy.idleEvictMs): void {
    if (local.ended || local.leases.size > 0 || local.inflight > 0) return;
    this.cancelIdle(local);
    local.cancelIdleTimer = this.clock.schedule(delayMs, () => void this.end(local, 'CLOSED', 'IDLE_EVICTED'));
  }

  private cancelIdle(local: LocalGeneration): void {
    local.cancelIdleTimer?.();
    local.cancelIdleTimer = undefined;
  }
}

const ENDED_REASONS_KEPT = 4096;

function connectionClosed(error: unknown): boolean {
  return RegistryReasons.of(error) === 'CONNECTION_CLOSED';
}
