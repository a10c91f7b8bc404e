import { AppHostError, type AppendProvenance, type LedgerEventInput, type PublicEvent, type SessionKey } from '@apphost/contracts';
import type { LifecycleMetrics } from '../metrics';
import { loadOrAdopt } from '../sessions/adoption';
import type { LifecycleRecord, LifecycleRepository } from '../sessions/lifecycle.repository';
import { failedPrecondition, notFound } from '../sessions/replies';
import type { EventLedgerRepository } from './event-ledger.repository';
import { finalizeEvents, toPublicEvent } from './finalizer';

export interface EventsDeps {
  repo: LifecycleRepository;
  ledger: EventLedgerRepository;
  metrics: LifecycleMetrics;
}

const DEFAULT_PAGE = 100;

/**
 * Appends through the finalizer (validation and stamping happen before anything is written), in one guarded
 * statement; when it writes nothing, the record says why: not found, not the current ACTIVE(n), still CREATING,
 * or a stale coordination fencing token.
 */
export async function appendEvents(
  deps: EventsDeps,
  req: { session: SessionKey; incarnation: number; provenance: AppendProvenance; events: LedgerEventInput[]; fencingToken?: number },
): Promise<{ incarnation: number; eventIds: number[] }> {
  const finalized = finalizeEvents(req.events, req.provenance);
  let ids = await deps.ledger.append(req.session, req.incarnation, finalized, req.fencingToken ?? null);
  if (!ids) {
    const record = await loadOrAdopt(deps.repo, deps.metrics, req.session);
    if (record?.adopted && record.version === 1 && record.state === 'ACTIVE') {
      ids = await deps.ledger.append(req.session, req.incarnation, finalized, req.fencingToken ?? null); // just adopted
    }
    if (!ids) throw await diagnose(deps, req.session, req.incarnation, record, req.fencingToken);
  }
  return { incarnation: req.incarnation, eventIds: ids };
}

async function diagnose(deps: EventsDeps, key: SessionKey, incarnation: number, record: LifecycleRecord | null, fencingToken?: number): Promise<AppHostError> {
  if (!record) return notFound(key);
  admissible(record, incarnation);
  if (fencingToken !== undefined) {
    const seen = await deps.ledger.coordinationToken(key);
    if (seen !== null && seen > fencingToken) {
      return failedPrecondition('STALE_FENCING_TOKEN', `fencing token ${fencingToken} is older than ${seen}, which this session already saw`, { seen });
    }
  }
  return failedPrecondition('STALE_INCARNATION', `session ${key.sessionId} changed while appending; re-read it`, {
    incarnation: record.incarnation,
    state: record.state,
  });
}

/** App operations need the current ACTIVE(n): CREATING denies them, anything else is a stale incarnation. */
function admissible(record: LifecycleRecord, incarnation: number): void {
  if (record.incarnation === incarnation && record.state === 'ACTIVE') return;
  if (record.incarnation === incarnation && record.state === 'CREATING') {
    throw failedPrecondition('SESSION_CREATING', `session ${record.key.sessionId} is still being created`, {
      incarnation: record.incarnation,
      state: record.state,
    });
  }
  throw failedPrecondition('STALE_INCARNATION', `incarnation ${incarnation} of session ${record.key.sessionId} is not the current active one`, {
    incarnation: record.incarnation,
    state: record.state,
  });
}

export async function listEvents(
  deps: EventsDeps,
  req: { session: SessionKey; incarnation?: number; afterId?: number; limit?: number },
): Promise<{ incarnation: number; events: PublicEvent[]; nextAfterId: number | null }> {
  const record = await loadOrAdopt(deps.repo, deps.metrics, req.session);
  if (!record || record.state === 'DELETED') throw notFound(req.session);
  admissible(record, req.incarnation ?? record.incarnation);
  const limit = req.limit ?? DEFAULT_PAGE;
  const page = await deps.ledger.page(req.session, record.incarnation, req.afterId ?? 0, limit);
  const events = page.map(toPublicEvent);
  return { incarnation: record.incarnation, events, nextAfterId: page.length === limit ? page[page.length - 1].id : null };
}
