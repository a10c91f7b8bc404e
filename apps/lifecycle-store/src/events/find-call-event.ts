import { type LedgerEventInput, type ParsedRequestOf, type ResponseOf, type LifecycleFindCallEvent } from '@apphost/contracts';
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
  const found = await deps.lookup.first(req.session, req.incarnation, req.answering, req.callId, req.afterEventId, req.invocationId ?? null);
  if (!found) return { event: null };
  const body = found.body as LedgerEventInput;
  return {
    event: {
      eventId: found.id,
      invocationId: body.invocationId ?? null,
      functionCalls: body.functionCalls ?? [],
      functionResponses: body.functionResponses ?? [],
      widgets: body.widgets ?? [],
      customMetadata: body.customMetadata ?? null,
    },
  };
}
