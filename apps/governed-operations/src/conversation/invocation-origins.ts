import type { BusClient } from '@apphost/bus';
import { AppHostError, LifecycleFindConsumedMessage, type AppendProvenance, type SessionKey } from '@apphost/contracts';

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
      if (error instanceof AppHostError && error.code === 'NOT_FOUND') throw error;
      throw new AppHostError('UNAVAILABLE', 'whether the invocation continues a ui/message could not be read; nothing ran, retry', { retryable: true });
    }
  }
}
