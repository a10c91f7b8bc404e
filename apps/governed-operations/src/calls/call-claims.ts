import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalize } from '@apphost/canonical-json';
import type { CoordinationStore } from '@apphost/coordination';
import type { SessionKey } from '@apphost/contracts';

/** Whose call ids these are: one session incarnation, one model invocation. */
export interface ClaimScope {
  session: SessionKey;
  incarnation: number;
  invocationId: string;
}

const claimSchema = z.strictObject({ replayDigest: z.string(), owner: z.string() });

export type ClaimResult = { kind: 'claimed' } | { kind: 'in-flight' } | { kind: 'conflict' };

/**
 * Per (incarnation, invocationId, functionCallId) claims in the coordination store, taken at admission before
 * anything runs. A claim holds the batch's replay digest (canonical ids, tools and arguments), so a duplicate is
 * told apart from other calls under the same ids before the first one's event exists. A batch that fails before
 * any call ran releases its claims (the retry may run); one that ran keeps them until `ttlMs`, so a retry never
 * runs the calls again while the ledger does not yet answer it.
 */
export class CallClaims {
  constructor(
    private readonly store: CoordinationStore,
    private readonly ttlMs: number,
  ) {}

  async claim(scope: ClaimScope, functionCallIds: readonly string[], replayDigest: string, owner: string): Promise<ClaimResult> {
    const value = JSON.stringify({ replayDigest, owner });
    const taken: string[] = [];
    for (const id of functionCallIds) {
      if (await this.store.setIfAbsent(keyOf(scope, id), value, this.ttlMs)) {
        taken.push(id);
        continue;
      }
      const held = await this.store.get(keyOf(scope, id));
      await this.releaseIds(scope, taken, value);
      const parsed = held === null ? null : claimSchema.safeParse(JSON.parse(held));
      // A claim that lapsed between the two reads is treated as in flight: the caller's retry settles it.
      return parsed?.success && parsed.data.replayDigest !== replayDigest ? { kind: 'conflict' } : { kind: 'in-flight' };
    }
    return { kind: 'claimed' };
  }

  /** Releases this owner's claims (never another's): the batch failed before any of its calls ran. */
  async release(scope: ClaimScope, functionCallIds: readonly string[], replayDigest: string, owner: string): Promise<void> {
    await this.releaseIds(scope, functionCallIds, JSON.stringify({ replayDigest, owner }));
  }

  private async releaseIds(scope: ClaimScope, ids: readonly string[], value: string): Promise<void> {
    for (const id of ids) await this.store.compareAndDelete(keyOf(scope, id), value);
  }
}

function keyOf(scope: ClaimScope, functionCallId: string): string {
  const digest = createHash('sha256')
    .update(canonicalize({ session: scope.session, incarnation: scope.incarnation, invocationId: scope.invocationId, functionCallId }))
    .digest('hex');
  return `call-claim:${digest}`;
}
