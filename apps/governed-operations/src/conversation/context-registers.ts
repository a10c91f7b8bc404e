import { AppHostError, GovernedReasons } from '@apphost/contracts';
import type { ViewContext } from '../view-rpc/ports';
import type { ContextRegister, ViewRecord, ViewRecords } from '../views/view-records';
import type { ContextUpdate } from './context-update';

/** Why a commit changed nothing (`details.stale`): a newer update committed first, or the View is not the one admitted. */
type Staleness = 'SUPERSEDED' | 'VIEW_ENDED' | 'VIEW_CHANGED';

/** How often a commit re-reads after losing its compare-and-set to a change that leaves it committable (a renew). */
const MAX_ATTEMPTS = 8;

/**
 * `ui/update-model-context` after the barrier: the atomic commit of the View's register. The commit sequence is
 * host-assigned (never the View's) from the incarnation's fence, taken first; the register is then written by one
 * compare-and-set on the View record, and only while the record is still the View the barrier passed (ACTIVE, live,
 * same grant and generation, lease running) and its last commit is older. Anything else changes nothing and answers
 * FAILED_PRECONDITION `CONTEXT_UPDATE_STALE`: a teardown, a revocation or a newer update that won the race wins.
 * An empty update commits `register: null` (its sequence still orders it against older queued updates).
 */
export class ContextRegisters {
  constructor(private readonly records: ViewRecords) {}

  async commit(ctx: ViewContext, update: ContextUpdate): Promise<Record<string, never>> {
    const admitted = ctx.view.record;
    const commitSequence = await this.records.nextContextSequence(admitted.session, admitted.incarnation);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.records.find(admitted.viewId);
      if (!current) throw staleError('VIEW_ENDED', commitSequence); // purged meanwhile (its session was deleted)
      const staleness = stalenessOf(current.record, admitted, commitSequence);
      if (staleness) throw staleError(staleness, commitSequence);
      const register: ContextRegister | null = update.empty
        ? null
        : {
            commitSequence,
            content: update.content,
            structuredContent: update.structuredContent,
            bytes: update.bytes,
            committedAt: new Date().toISOString(),
          };
      if (await this.records.update(current, { ...current.record, register, contextSequence: commitSequence })) return {};
    }
    throw new AppHostError('UNAVAILABLE', 'the view kept changing while its model context was being committed', { retryable: true });
  }
}

/** Null when `sequence` may commit on `record`: the same live View the barrier passed, and nothing newer committed. */
function stalenessOf(record: ViewRecord, admitted: ViewRecord, sequence: number): Staleness | null {
  if (record.state !== 'ACTIVE' || record.mode !== 'live' || !record.generation) return 'VIEW_ENDED';
  if (record.expiresAt !== null && Date.parse(record.expiresAt) <= Date.now()) return 'VIEW_ENDED';
  if (
    record.grantDigest !== admitted.grantDigest ||
    record.viewGeneration !== admitted.viewGeneration ||
    record.generation.generationId !== admitted.generation?.generationId ||
    record.bindingGeneration !== admitted.bindingGeneration ||
    record.bindingRevision !== admitted.bindingRevision
  )
    return 'VIEW_CHANGED';
  return record.contextSequence < sequence ? null : 'SUPERSEDED';
}

function staleError(stale: Staleness, commitSequence: number): AppHostError {
  return new AppHostError('FAILED_PRECONDITION', 'the model context update is stale: nothing changed', {
    details: GovernedReasons.details('CONTEXT_UPDATE_STALE', { stale, commitSequence }),
  });
}
