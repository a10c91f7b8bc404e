import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalize } from '@apphost/canonical-json';
import type { CoordinationStore } from '@apphost/coordination';
import { AppHostError, type SessionKey } from '@apphost/contracts';

/** Whose call ids these are: one session incarnation, one model invocation. */
export interface ClaimScope {
  session: SessionKey;
  incarnation: number;
  invocationId: string;
}

const claimSchema = z.strictObject({ replayDigest: z.string(), owner: z.string(), operationId: z.string(), started: z.boolean() });

/** Who holds a claim: the process (`OwnerHeartbeat.ownerId`, checked for liveness) and its run of the batch. */
export interface ClaimHolder {
  owner: string;
  operationId: string;
}

/** A claim found held by another run: its process, whether a call of it had started, and its exact value. */
export interface HeldClaim {
  owner: string;
  started: boolean;
  value: string;
}

/** `held` is null when the claim lapsed between two reads or is not in this version's shape. */
export type ClaimResult = { kind: 'claimed' } | { kind: 'in-flight'; held: HeldClaim | null } | { kind: 'conflict' };

/**
 * Per (incarnation, invocationId, functionCallId) claims in the coordination store, taken at admission before
 * anything runs. A claim holds the batch's replay digest (canonical ids, tools and arguments), so a duplicate is
 * told apart from other calls under the same ids before the first one's event exists. It names its owner process
 * and is marked `started` right before the first call executes, so a duplicate that finds the owner dead knows
 * whether a tool may have run. A batch that fails before any call ran releases its claims (the retry may run);
 * one that ran keeps them until `ttlMs`, so a retry never runs the calls again while the ledger does not yet
 * answer it.
 */
export class CallClaims {
  constructor(
    private readonly store: CoordinationStore,
    private readonly ttlMs: number,
  ) {}

  async claim(scope: ClaimScope, functionCallIds: readonly string[], replayDigest: string, holder: ClaimHolder): Promise<ClaimResult> {
    const value = valueOf(replayDigest, holder, false);
    const taken: string[] = [];
    for (const id of functionCallIds) {
      if (await this.store.setIfAbsent(keyOf(scope, id), value, this.ttlMs)) {
        taken.push(id);
        continue;
      }
      const held = await this.store.get(keyOf(scope, id));
      await this.releaseIds(scope, taken, [value]);
      // A claim that lapsed between the two reads (or of another version's shape) is treated as in flight: the
      // caller's retry settles it.
      const parsed = held === null ? null : claimSchema.safeParse(JSON.parse(held));
      if (held === null || !parsed?.success) return { kind: 'in-flight', held: null };
      if (parsed.data.replayDigest !== replayDigest) return { kind: 'conflict' };
      return { kind: 'in-flight', held: { owner: parsed.data.owner, started: parsed.data.started, value: held } };
    }
    return { kind: 'claimed' };
  }

  /**
   * Persists "a call started" on every claim of this holder, right before the first call executes. Rejects
   * (UNAVAILABLE, nothing ran) when the store is down or a claim is no longer this holder's (taken over).
   */
  async markStarted(scope: ClaimScope, functionCallIds: readonly string[], replayDigest: string, holder: ClaimHolder): Promise<void> {
    const [unstarted, started] = [valueOf(replayDigest, holder, false), valueOf(replayDigest, holder, true)];
    for (const id of functionCallIds) {
      if (!(await this.store.compareAndSet(keyOf(scope, id), unstarted, started, this.ttlMs)))
        throw new AppHostError('UNAVAILABLE', 'the batch lost its call-id claim before any call ran; nothing ran');
    }
  }

  /** Takes over claims whose owner is dead and had not started a call: deletes exactly `held`, then claims anew. */
  async takeOver(scope: ClaimScope, functionCallIds: readonly string[], held: HeldClaim, replayDigest: string, holder: ClaimHolder): Promise<ClaimResult> {
    await this.releaseIds(scope, functionCallIds, [held.value]);
    return this.claim(scope, functionCallIds, replayDigest, holder);
  }

  /** Releases this holder's claims (never another's): the batch failed before any of its calls ran. */
  async release(scope: ClaimScope, functionCallIds: readonly string[], replayDigest: string, holder: ClaimHolder): Promise<void> {
    // A start mark that failed part-way may have marked some ids: those go too (no call ran).
    await this.releaseIds(scope, functionCallIds, [valueOf(replayDigest, holder, false), valueOf(replayDigest, holder, true)]);
  }

  private async releaseIds(scope: ClaimScope, ids: readonly string[], values: readonly string[]): Promise<void> {
    for (const id of ids) for (const value of values) await this.store.compareAndDelete(keyOf(scope, id), value);
  }
}

/** The exact stored value (fixed member order: values are compared as strings). */
function valueOf(replayDigest: string, holder: ClaimHolder, started: boolean): string {
  return JSON.stringify({ replayDigest, owner: holder.owner, operationId: holder.operationId, started });
}

function keyOf(scope: ClaimScope, functionCallId: string): string {
  const digest = createHash('sha256')
    .update(canonicalize({ session: scope.session, incarnation: scope.incarnation, invocationId: scope.invocationId, functionCallId }))
    .digest('hex');
  return `call-claim:${digest}`;
}
