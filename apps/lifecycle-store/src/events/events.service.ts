import {
  AppHostError,
  isWidgetDescriptor,
  type AppendProvenance,
  type LifecycleGetEvent,
  type LedgerEventInput,
  type PublicEvent,
  type ResponseOf,
  type SessionKey,
} from '@apphost/contracts';
import type { LifecycleMetrics } from '../metrics';
import { loadOrAdopt } from '../sessions/adoption';
import type { LifecycleRecord, LifecycleRepository } from '../sessions/lifecycle.repository';
import { failedPrecondition, notFound } from '../sessions/replies';
import { locateCall } from './call-locator';
import type { EventLedgerRepository, StoredEvent } from './event-ledger.repository';
import { finalizeEvents, toPublicEvent } from './finalizer';

export interface EventsDeps {
  repo: LifecycleRepository;
  ledger: EventLedgerRepository;
  metrics: LifecycleMetrics;
}

const DEFAULT_PAGE = 100;

type GetEventResponse = ResponseOf<typeof LifecycleGetEvent>;

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
  req: { session: SessionKey; incarnation?: number; afterId?: number; limit?: number; audience?: 'model' | 'all' },
): Promise<{ incarnation: number; events: PublicEvent[]; nextAfterId: number | null }> {
  const record = await loadOrAdopt(deps.repo, deps.metrics, req.session);
  if (!record || record.state === 'DELETED') throw notFound(req.session);
  admissible(record, req.incarnation ?? record.incarnation);
  const limit = req.limit ?? DEFAULT_PAGE;
  const page = await deps.ledger.page(req.session, record.incarnation, req.afterId ?? 0, limit, req.audience ?? 'all');
  const events = page.map(toPublicEvent);
  return { incarnation: record.incarnation, events, nextAfterId: page.length === limit ? page[page.length - 1].id : null };
}

/**
 * One function call as one event of the current ACTIVE(n) recorded it, verified against the ledger: the session must
 * be ACTIVE in `incarnation` and the event must exist in it and carry the call (a descriptor, a legacy widget of its
 * tool, or an event-level sealed reference; `call-locator.ts`). Anything absent or foreign is NOT_FOUND.
 */
export async function getEvent(
  deps: EventsDeps,
  req: { session: SessionKey; incarnation: number; eventId: number; functionCallId: string },
): Promise<GetEventResponse> {
  const record = await loadOrAdopt(deps.repo, deps.metrics, req.session);
  if (!record || record.state === 'DELETED') throw notFound(req.session);
  admissible(record, req.incarnation);
  return locateOnLedger(deps, req);
}

/** `get-event` once its session is known to be `ACTIVE(incarnation)`: the event and the call on that ledger, or NOT_FOUND. */
export async function locateOnLedger(
  deps: Pick<EventsDeps, 'ledger'>,
  req: { session: SessionKey; incarnation: number; eventId: number; functionCallId: string },
): Promise<GetEventResponse> {
  return locateStored(await deps.ledger.one(req.session, req.incarnation, req.eventId), req);
}

/** The call of `req` on an event already read (null: there is none), as `get-event` answers it, or NOT_FOUND. */
export function locateStored(stored: StoredEvent | null, req: { eventId: number; functionCallId: string }): GetEventResponse {
  if (!stored) throw new AppHostError('NOT_FOUND', `event ${req.eventId} does not exist`);
  const located = locateCall(stored.body as LedgerEventInput, req.functionCallId);
  if (!located) throw new AppHostError('NOT_FOUND', `function call ${req.functionCallId} has no widget or sealed result on event ${req.eventId}`);
  const descriptor = located.widget && isWidgetDescriptor(located.widget) ? located.widget : null;
  return {
    incarnation: stored.incarnation,
    eventId: stored.id,
    functionCallId: req.functionCallId,
    toolsetId: descriptor?.toolsetId ?? null,
    bindingRevision: descriptor?.bindingRevision ?? null,
    sealedResultRef: located.sealedResultRef,
    widget: located.widget,
    call: located.call,
  };
}
