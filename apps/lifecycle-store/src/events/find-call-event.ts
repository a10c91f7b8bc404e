import {
  type LedgerEventInput,
  type LifecycleFindCallEvent,
  type LifecycleOpenBatch,
  type ParsedRequestOf,
  type PendingMessage,
  type ResponseOf,
  type SessionKey,
} from '@apphost/contracts';
import { loadOrAdopt } from '../sessions/adoption';
import { notFound } from '../sessions/replies';
import type { CallEventLookupRepository } from './call-event-lookup.repository';
import { admissible, type EventsDeps } from './events.service';

/** `find-call-event`: the first event of the current ACTIVE(n) ledger naming the call id (see the contract). */
export async function findCallEvent(
  deps: Pick<EventsDeps, 'repo' | 'metrics'> & { lookup: CallEventLookupRepository },
  req: ParsedRequestOf<typeof LifecycleFindCallEvent>,
): Promise<ResponseOf<typeof LifecycleFindCallEvent>> {
  const record = await loadOrAdopt(deps.repo, deps.metrics, req.session);
  if (!record || record.state === 'DELETED') throw notFound(req.session);
  admissible(record, req.incarnation);
  return { event: await lookupCallEvent(deps.lookup, req) };
}

/** The lookup itself, on an incarnation the caller found ACTIVE. */
export async function lookupCallEvent(
  lookup: CallEventLookupRepository,
  req: Pick<ParsedRequestOf<typeof LifecycleFindCallEvent>, 'session' | 'incarnation' | 'answering' | 'callId' | 'afterEventId' | 'invocationId'>,
): Promise<ResponseOf<typeof LifecycleFindCallEvent>['event']> {
  const found = await lookup.first(req.session, req.incarnation, req.answering, req.callId, req.afterEventId, req.invocationId ?? null);
  if (!found) return null;
  const body = found.body as LedgerEventInput;
  return {
    eventId: found.id,
    invocationId: body.invocationId ?? null,
    functionCalls: body.functionCalls ?? [],
    functionResponses: body.functionResponses ?? [],
    widgets: body.widgets ?? [],
    customMetadata: body.customMetadata ?? null,
  };
}

/**
 * `open-batch`: one read of the session record (ACTIVE, else NOT_FOUND), then the consumed-message and call-event
 * lookups on its incarnation, concurrently (see the contract).
 */
export async function openBatch(
  deps: Pick<EventsDeps, 'repo' | 'metrics'> & {
    lookup: CallEventLookupRepository;
    consumedBy: (session: SessionKey, incarnation: number, invocationId: string) => Promise<PendingMessage | null>;
  },
  req: ParsedRequestOf<typeof LifecycleOpenBatch>,
): Promise<ResponseOf<typeof LifecycleOpenBatch>> {
  const record = await loadOrAdopt(deps.repo, deps.metrics, req.session);
  if (!record || record.state !== 'ACTIVE') throw notFound(req.session);
  const { incarnation } = record;
  const [consumedMessage, event] = await Promise.all([
    deps.consumedBy(req.session, incarnation, req.invocationId),
    lookupCallEvent(deps.lookup, {
      session: req.session,
      incarnation,
      answering: 'response',
      callId: req.callId,
      afterEventId: 0,
      invocationId: req.invocationId,
    }),
  ]);
  return { incarnation, consumedMessage, event };
}
