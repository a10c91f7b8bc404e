import type { Logger } from '@apphost/runtime';
import type { ViewRevocationReason } from '@apphost/contracts';
import { describeFailure } from '../tool-batches/batch-plan';
import type { ViewCollaborators } from './view-collaborators';
import type { SessionLocks } from './session-locks';
import type { StoredView, ViewRecords } from './view-records';

/**
 * How a View stops: phase 1 marks it ended at once (CLOSED on teardown, REVOKED otherwise; every grant check fails
 * from then on) and drops its model-context register, phase 2 (which drops a register again, whatever wrote it), under the session's lock, gives its generation reference back.
 * A crash (or a lost lock race) between the phases leaves an ended record with `released: false`: the next close,
 * `get-view`, or the sweep finishes it. Both phases are compare-and-set on the stored record, so replicas racing on
 * one View end it once.
 */
export class ViewTeardown {
  constructor(
    private readonly records: ViewRecords,
    private readonly peers: ViewCollaborators,
    private readonly locks: SessionLocks,
    private readonly logger: Logger,
  ) {}

  /** Phase 1 then phase 2. Returns the record as it ends, and whether this call ended it (false: it had ended already). */
  async end(viewId: string, reason: ViewRevocationReason): Promise<{ view: StoredView; ended: boolean } | null> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const current = await this.records.find(viewId);
      if (!current) return null;
      if (current.record.state === 'CLOSED' || current.record.state === 'REVOKED') return { view: await this.finish(current), ended: false };
      const state = reason === 'TORN_DOWN' ? 'CLOSED' : 'REVOKED';
      // The register goes in the same compare-and-set: an ended View's context is never kept, and a commit racing
      // this one finds the record changed (its own compare-and-set fails: nothing committed).
      const marked = await this.records.update(current, { ...current.record, state, reason, register: null });
      if (!marked) continue; // another replica changed it: read again
      this.logger.info({ viewId, session: current.record.session.sessionId, state, reason }, 'view ended');
      return { view: await this.finish(marked), ended: true };
    }
    throw new Error(`view ${viewId} kept changing while it was being ended`);
  }

  /** Phase 2 of an ended View whose reference is still held; a no-op otherwise. Never throws: a failure is retried later. */
  async finish(view: StoredView): Promise<StoredView> {
    const { record } = view;
    if (record.released || (record.state !== 'CLOSED' && record.state !== 'REVOKED')) return view;
    try {
      const outcome = await this.locks.withLock(record.session, async () => {
        const current = await this.records.find(record.viewId);
        if (!current || current.record.released) return current;
        if (current.record.generation && current.record.leaseId) await this.peers.release(current.record.generation, current.record.leaseId);
        return (await this.records.update(current, { ...current.record, released: true, register: null })) ?? current;
      });
      if (outcome?.done) return outcome.done;
    } catch (error) {
      this.logger.warn({ viewId: record.viewId, error: describeFailure(error) }, 'releasing an ended view failed: retried on the next touch or sweep');
    }
    return view;
  }
}
