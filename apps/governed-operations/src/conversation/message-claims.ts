import type { BusClient } from '@apphost/bus';
import {
  AppHostError,
  GovernedReasons,
  LifecycleClaimMessage,
  LifecycleDecideMessage,
  LifecycleGetMessage,
  type GovernedClaimMessage,
  type MessageState,
  type ParsedRequestOf,
  type PendingMessage,
  type ResponseOf,
} from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import type { ViewCollaborators } from '../views/view-collaborators';

type ClaimRequest = ParsedRequestOf<typeof GovernedClaimMessage>;
type ClaimResponse = ResponseOf<typeof GovernedClaimMessage>;
type Rejection = NonNullable<PendingMessage['rejection']>;

/** The states a claim could take: only those are re-checked (a consumed, expired or rejected one answers as it is). */
const CLAIMABLE: readonly MessageState[] = ['ACCEPTED', 'CLAIMED'];

const rejected = (rejection: Rejection, messageId: string) =>
  new AppHostError('FAILED_PRECONDITION', `message ${messageId} was rejected: ${rejection}`, {
    details: GovernedReasons.details('MESSAGE_REJECTED', { rejection }),
  });

const isStaleSession = (error: unknown) =>
  error instanceof AppHostError &&
  error.code === 'FAILED_PRECONDITION' &&
  (error.details?.['reason'] === 'STALE_INCARNATION' || error.details?.['reason'] === 'SESSION_CREATING');

/**
 * A runtime's claim on an accepted `ui/message`. Before the store hands out a claim token, what the message depends on
 * is re-checked: the session still `ACTIVE` in the message's incarnation (lifecycle-store's `get-message` answers
 * only then), the View opener's principal not revoked, the toolset still `PROFILE_BOUND` at the message's binding
 * generation and revision. A check that fails makes the message `REJECTED` for good (FAILED_PRECONDITION
 * `MESSAGE_REJECTED`); a check that cannot be made fails the claim UNAVAILABLE (retryable) and changes nothing. The
 * View's own teardown is not checked: an accepted message belongs to the conversation.
 */
export class MessageClaims {
  constructor(
    private readonly bus: BusClient,
    private readonly peers: ViewCollaborators,
    private readonly logger: Logger,
  ) {}

  async claim(request: ClaimRequest): Promise<ClaimResponse> {
    const { session, messageId } = request;
    // The gateway checks ownership; a caller of another tenant never learns whether the message exists.
    if (request.principal.tenant !== session.tenant) throw new AppHostError('NOT_FOUND', `message ${messageId} does not exist in this session`);
    const message = await this.current(request);
    if (CLAIMABLE.includes(message.state)) {
      const rejection = await this.rejectionOf(message);
      if (rejection) {
        await this.bus.request(LifecycleDecideMessage, { decision: 'reject', session, messageId, rejection });
        this.logger.info({ session: session.sessionId, messageId, rejection }, 'message rejected at claim');
        throw rejected(rejection, messageId);
      }
    }
    try {
      return await this.bus.request(LifecycleClaimMessage, { session, messageId, claimTtlMs: request.claimTtlMs });
    } catch (error) {
      // Deleted (or re-created) between the read and the claim: its messages go with it.
      if (isStaleSession(error)) throw rejected('SESSION_DELETED', messageId);
      throw error;
    }
  }

  /** The message now; a session no longer `ACTIVE` in its incarnation (deletion purges its messages) rejects it. */
  private async current(request: ClaimRequest): Promise<PendingMessage> {
    try {
      return (await this.bus.request(LifecycleGetMessage, { session: request.session, messageId: request.messageId })).message;
    } catch (error) {
      if (isStaleSession(error)) throw rejected('SESSION_DELETED', request.messageId);
      throw error;
    }
  }

  /** The first dependency of the message that no longer holds, or null; UNAVAILABLE when one cannot be checked. */
  private async rejectionOf(message: PendingMessage): Promise<Rejection | null> {
    try {
      if (await this.peers.principalRevoked(message.principal)) return 'PRINCIPAL_REVOKED';
      const status = await this.peers.toolset(message.toolsetId);
      if (!status || status.state !== 'PROFILE_BOUND') return 'TOOLSET_REVOKED';
      if (status.bindingGeneration !== message.bindingGeneration || status.bindingRevision !== message.bindingRevision) return 'TOOLSET_REBOUND';
      return null;
    } catch (error) {
      this.logger.warn({ messageId: message.messageId, err: error }, 'a claim could not re-check its message');
      throw new AppHostError('UNAVAILABLE', `the message's principal or binding could not be re-checked; nothing changed, retry`, { retryable: true });
    }
  }
}
