import type { SessionKey, SessionSnapshot } from '@apphost/contracts';
import type { LifecycleMetrics } from '../metrics';
import { loadOrAdopt } from './adoption';
import { cascadePlan, driveCascade, type CascadeDeps } from './cascade-driver';
import { conflict, failedPrecondition, notFound, toSnapshot } from './replies';

export interface DeleteDeps extends CascadeDeps {
  metrics: LifecycleMetrics;
  participants: readonly string[];
}

/**
 * Deletion: ACTIVE(n) → DELETING(n) with the cascade plan (new admissions fail from this commit on) — first as a guarded
 * update without a read, else read-then-CAS — then the cascade driver. Idempotent: DELETING resumes, DELETED answers
 * as is. CREATING cannot be deleted (FAILED_PRECONDITION).
 */
export async function deleteSession(deps: DeleteDeps, req: { session: SessionKey; expectedIncarnation?: number }): Promise<SessionSnapshot> {
  // The common case is an ACTIVE session: move it to DELETING straight away (guarded by state and the expected
  // incarnation) instead of reading first; a miss wrote nothing, and the read-then-CAS loop answers from what is there.
  const deleting = await deps.repo.beginDeletionIfActive(req.session, req.expectedIncarnation ?? null, cascadePlan(deps.participants));
  if (deleting) {
    deps.metrics.transitions.inc({ transition: 'begin-delete', outcome: 'ok' });
    await deps.faults.hit('delete.after-deleting');
    return toSnapshot(await driveCascade(deps, deleting));
  }
  for (let attempt = 0; attempt < 5; attempt++) {
    const record = await loadOrAdopt(deps.repo, deps.metrics, req.session);
    if (!record) throw notFound(req.session);
    if (req.expectedIncarnation !== undefined && req.expectedIncarnation !== record.incarnation) {
      throw failedPrecondition('STALE_INCARNATION', `session ${req.session.sessionId} is at incarnation ${record.incarnation}`, {
        incarnation: record.incarnation,
        state: record.state,
      });
    }
    switch (record.state) {
      case 'DELETED':
        return toSnapshot(record);
      case 'CREATING':
        throw failedPrecondition('SESSION_CREATING', `session ${req.session.sessionId} is still being created`, { incarnation: record.incarnation });
      case 'DELETING':
        return toSnapshot(await driveCascade(deps, record));
      case 'ACTIVE': {
        const deleting = await deps.repo.beginDeletion(req.session, record.incarnation, record.version, cascadePlan(deps.participants));
        deps.metrics.transitions.inc({ transition: 'begin-delete', outcome: deleting ? 'ok' : 'lost' });
        if (!deleting) continue;
        await deps.faults.hit('delete.after-deleting');
        return toSnapshot(await driveCascade(deps, deleting));
      }
    }
  }
  throw conflict('CONTENDED', `session ${req.session.sessionId} changed on every attempt; retry`);
}
