import { type LedgerEventInput, type LifecycleFindCallEvent, type LifecycleOpenBatch, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { loadOrAdopt } from '../sessions/adoption';
import { notFound } from '../sessions/replies';
import { callEventOf, callIdsPattern, firstCallEventSql, type CallEventLookupRepository } from './call-event-lookup.repository';
import { consumedMessageOf, consumedMessageSql, type MessageRow } from '../messages/message.repository';
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
  return callEventAnswer(await lookup.first(req.session, req.incarnation, req.answering, req.callId, req.afterEventId, req.invocationId ?? null));
}

/** A found call event as the contracts answer it. */
function callEventAnswer(found: { id: number; body: Record<string, unknown> } | null): ResponseOf<typeof LifecycleFindCallEvent>['event'] {
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
 * `open-batch`: the session record (ACTIVE, else NOT_FOUND) with, on its incarnation, the message the invocation
 * consumed and the event answering the call — one statement (`LifecycleRepository.probeWith`), so one round trip and
 * one snapshot. A legacy session row is adopted first, then read by the same statement.
 */
export async function openBatch(
  deps: Pick<EventsDeps, 'repo' | 'metrics'> & { retentionMs: number },
  req: ParsedRequestOf<typeof LifecycleOpenBatch>,
): Promise<ResponseOf<typeof LifecycleOpenBatch>> {
  // $5 is the messages' retention, $6 the invocation id, $7 the call id's containment pattern.
  const read = () =>
    deps.repo.probeWith(
      req.session,
      {
        consumed: consumedMessageSql('r.incarnation', '$6'),
        event: firstCallEventSql('response', { incarnation: 'r.incarnation', afterEventId: '0', callIds: '$7', invocationId: '$6' }),
      },
      [deps.retentionMs, req.invocationId, callIdsPattern(req.callId)],
    );
  let opened = await read();
  if (!opened.record && opened.legacy) {
    await loadOrAdopt(deps.repo, deps.metrics, req.session);
    opened = await read();
  }
  if (!opened.record || opened.record.state !== 'ACTIVE') throw notFound(req.session);
  return {
    incarnation: opened.record.incarnation,
    consumedMessage: consumedMessageOf(req.session, opened.read.consumed as MessageRow | null),
    event: callEventAnswer(callEventOf(opened.read.event as { event_id: number; body: Record<string, unknown> } | null)),
  };
}
