import { BusClient } from '@apphost/bus';
import { AppHostError, GovernedReasons, LifecycleFindCallEvent, type SessionKey } from '@apphost/contracts';
import { REQUEST_CONFIRMATION_TOOL } from './confirmation-gate';

/**
 * Why a decision found no permit, from the ledger (the durable evidence): an `adk_request_confirmation` call with
 * this id in the current incarnation, and no later event answering its original call, means the permit was
 * issued and never decided, so the coordination store lost it (a Redis restart): DATA_LOSS
 * (`CONFIRMATION_PERMIT_LOST`), nothing ran. Anything else is NOT_FOUND (never issued, or already decided).
 */
export async function missingPermitError(bus: BusClient, session: SessionKey, incarnation: number, confirmationId: string): Promise<AppHostError> {
  const notFound = new AppHostError('NOT_FOUND', 'no pending confirmation with this id in this session (already decided, or never issued)');
  const issued = await bus.request(LifecycleFindCallEvent, { session, incarnation, callId: confirmationId, answering: 'call' });
  const request = issued.event?.functionCalls.find((c) => c.id === confirmationId && c.name === REQUEST_CONFIRMATION_TOOL);
  const original = (request?.args as { originalFunctionCall?: { id?: unknown } } | undefined)?.originalFunctionCall?.id;
  if (!issued.event || typeof original !== 'string') return notFound;
  const decided = await bus.request(LifecycleFindCallEvent, {
    session,
    incarnation,
    callId: original,
    answering: 'response',
    afterEventId: issued.event.eventId,
  });
  if (decided.event) return notFound;
  return new AppHostError(
    'DATA_LOSS',
    'this confirmation was issued but its pending permit was lost (the coordination store restarted); nothing ran, ask again',
    {
      details: GovernedReasons.details('CONFIRMATION_PERMIT_LOST', { confirmationId, eventId: issued.event.eventId }),
    },
  );
}
