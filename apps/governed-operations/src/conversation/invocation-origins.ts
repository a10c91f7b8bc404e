import type { BusClient } from '@apphost/bus';
import { AppHostError, LifecycleFindConsumedMessage, LifecycleOpenBatch, type AppendProvenance, type ResponseOf, type SessionKey } from '@apphost/contracts';

export const USER_TURN: AppendProvenance = { path: 'user-turn' };
export const UI_MESSAGE: AppendProvenance = { path: 'ui-message' };

/**
 * Who started an invocation: a model turn that consumed a View's `ui/message` (its tool events are stamped
 * `invocationOrigin: "mcp_app"` by the ledger's finalizer), or the user. One lookup per batch; when it cannot be
 * made the batch fails closed before anything ran (UNAVAILABLE, retryable), never stamped by a guess.
 */
export class InvocationOrigins {
  constructor(private readonly bus: BusClient) {}

  async provenanceOf(session: SessionKey, invocationId: string): Promise<AppendProvenance> {
    try {
      const { message } = await this.bus.request(LifecycleFindConsumedMessage, { session, invocationId });
      return message ? UI_MESSAGE : USER_TURN;
    } catch (error) {
      throw unreadable(error);
    }
  }

  /**
   * A batch's opening reads in one ledger request (`open-batch`): the session's ACTIVE incarnation, the invocation's
   * provenance and the event that already answers the batch's first call, if any. Fails closed like `provenanceOf`.
   */
  async openBatch(
    session: SessionKey,
    invocationId: string,
    callId: string,
  ): Promise<{ incarnation: number; provenance: AppendProvenance; answered: ResponseOf<typeof LifecycleOpenBatch>['event'] }> {
    try {
      const opened = await this.bus.request(LifecycleOpenBatch, { session, invocationId, callId });
      return { incarnation: opened.incarnation, provenance: opened.consumedMessage ? UI_MESSAGE : USER_TURN, answered: opened.event };
    } catch (error) {
      throw unreadable(error);
    }
  }
}

/** NOT_FOUND (no ACTIVE session) as it is; any other failure: UNAVAILABLE, retryable, nothing ran. */
function unreadable(error: unknown): AppHostError {
  if (error instanceof AppHostError && error.code === 'NOT_FOUND') return error;
  return new AppHostError('UNAVAILABLE', 'whether the invocation continues a ui/message could not be read; nothing ran, retry', { retryable: true });
}
