import {
  AppHostError,
  isWidgetDescriptor,
  type AppendProvenance,
  type DescriptorSealedResultRef,
  type LedgerEventInput,
  type PublicEvent,
  type SessionKey,
} from '@apphost/contracts';
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
export function admissible(record: LifecycleRecord, incarnation: number): void {
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

/**
 * One function call's sealed-result locator, verified against the ledger: the session must be the current ACTIVE(n)
 * of `incarnation`, the event must exist in it, and the call must have a sealed reference on that event (a profile-bound
 * descriptor or an event-level reference). Anything absent or foreign is NOT_FOUND.
 */
export async function getEvent(
  deps: EventsDeps,
  req: { session: SessionKey; incarnation: number; eventId: number; functionCallId: string },
): Promise<{
  incarnation: number;
  eventId: number;
  functionCallId: string;
  toolsetId: string | null;
  bindingRevision: string | null;
  sealedResultRef: DescriptorSealedResultRef | null;
}> {
  const record = await loadOrAdopt(deps.repo, deps.metrics, req.session);
  if (!record || record.state === 'DELETED') throw notFound(req.session);
  admissible(record, req.incarnation);
  const stored = await deps.ledger.one(req.session, req.incarnation, req.eventId);
  if (!stored) throw new AppHostError('NOT_FOUND', `event ${req.eventId} does not exist`);
  const body = stored.body as LedgerEventInput;
  const descriptor = (body.widgets ?? []).filter(isWidgetDescriptor).find((w) => w.correlation.functionCallId === req.functionCallId && w.sealedResultRef);
  const eventLevel = body.sealedResultRefs?.[req.functionCallId];
  if (!descriptor && !eventLevel) throw new AppHostError('NOT_FOUND', `function call ${req.functionCallId} has no sealed result on event ${req.eventId}`);
  return {
    incarnation: stored.incarnation,
    eventId: stored.id,
    functionCallId: req.functionCallId,
    toolsetId: descriptor?.toolsetId ?? null,
    bindingRevision: descriptor?.bindingRevision ?? null,
    sealedResultRef: descriptor?.sealedResultRef ?? eventLevel ?? null,
  };
}
