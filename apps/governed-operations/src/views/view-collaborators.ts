import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  CONNECTION_GENERATION_GONE,
  ConnGenerationState,
  ConnRelease,
  ConnRetain,
  LifecycleEndViewMessages,
  LifecycleGetEvent,
  LifecycleGetPrincipalRevocation,
  LifecycleGetSessionStanding,
  LifecycleGetWidgetStanding,
  RegistryGetProfile,
  RegistryGetToolset,
  type HostProfile,
  type MessageRejection,
  type Principal,
  type RequestOf,
  type ResponseOf,
  type SessionKey,
  type ToolsetStatus,
} from '@apphost/contracts';
import { readUnderPolicy, requestOnGeneration, type GenerationAddress, type PolicedRead, type PolicedReadResult } from '@apphost/mcp';
import type { Logger } from '@apphost/runtime';
import type { ViewRecord } from './view-records';

/** How many profiles one replica keeps (a profile is small; a deployment has few). */
const PROFILE_CACHE_SIZE = 256;
/** A teardown waits this long at most for the message fence (it never blocks a View's end). */
const MESSAGE_FENCE_TIMEOUT_MS = 2_000;

export type ViewGeneration = NonNullable<ViewRecord['generation']>;

/** True for the error every caller sees when a generation's owner no longer holds it (or is gone). */
export function isGenerationGone(error: unknown): boolean {
  return error instanceof AppHostError && error.code === 'FAILED_PRECONDITION' && error.details?.['reason'] === CONNECTION_GENERATION_GONE;
}

/**
 * What Views ask of the other services, one method per question: the ledger and the principal store
 * (lifecycle-store), toolsets, profiles and generation references (binding-registry), and the policed
 * `resources/read` (catalog-policy).
 */
export class ViewCollaborators {
  /**
   * Profiles by id. A stored profile is immutable (same id + other content is a CONFLICT, and none is deleted), so a
   * cached one never goes stale: bounded, oldest evicted first, no invalidation.
   */
  private readonly profiles = new Map<string, HostProfile>();

  constructor(
    private readonly bus: BusClient,
    private readonly timeouts: { readMs: number },
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly profileCacheSize = PROFILE_CACHE_SIZE,
  ) {}

  async principalRevoked(principal: Pick<Principal, 'tenant' | 'subject'>): Promise<boolean> {
    const answer = await this.bus.request(LifecycleGetPrincipalRevocation, { principal: { tenant: principal.tenant, subject: principal.subject } });
    return answer.revoked;
  }

  /**
   * The principal's revocation and the session's lifecycle record, both read now, in one request (`session` null: the
   * session does not exist). For the barriers that need both: one bus round trip instead of two.
   */
  standing(principal: Pick<Principal, 'tenant' | 'subject'>, session: SessionKey): Promise<ResponseOf<typeof LifecycleGetSessionStanding>> {
    return this.bus.request(LifecycleGetSessionStanding, { session, principal: { tenant: principal.tenant, subject: principal.subject } });
  }

  /** The lifecycle-store's fence of the View's pending messages: none of them is accepted once it answered. */
  async endViewMessages(session: SessionKey, viewId: string, rejection: MessageRejection): Promise<number> {
    return (await this.bus.request(LifecycleEndViewMessages, { session, viewId, rejection }, { timeoutMs: MESSAGE_FENCE_TIMEOUT_MS })).rejected;
  }

  /**
   * `standing` and, on an ACTIVE session, the widget's event on its current incarnation, in one request: a bootstrap's
   * first step (the event's answer is judged only after the principal's and the session's).
   */
  widgetStanding(
    principal: Pick<Principal, 'tenant' | 'subject'>,
    session: SessionKey,
    call: { eventId: number; functionCallId: string },
  ): Promise<ResponseOf<typeof LifecycleGetWidgetStanding>> {
    return this.bus.request(LifecycleGetWidgetStanding, { session, principal: { tenant: principal.tenant, subject: principal.subject }, ...call });
  }

  getEvent(request: RequestOf<typeof LifecycleGetEvent>): Promise<ResponseOf<typeof LifecycleGetEvent>> {
    return this.bus.request(LifecycleGetEvent, request);
  }

  /** The toolset's status, or null when the registry does not know it (deleted: as good as revoked). */
  async toolset(toolsetId: string): Promise<ToolsetStatus | null> {
    try {
      return await this.bus.request(RegistryGetToolset, { toolsetId });
    } catch (error) {
      if (error instanceof AppHostError && error.code === 'NOT_FOUND') return null;
      throw error;
    }
  }

  async profile(profileId: string): Promise<HostProfile> {
    const cached = this.profiles.get(profileId);
    if (cached) return cached;
    const { profile } = await this.bus.request(RegistryGetProfile, { profileId });
    if (this.profiles.size >= this.profileCacheSize) this.profiles.delete(this.profiles.keys().next().value as string);
    this.profiles.set(profileId, profile);
    return profile;
  }

  /** A new reference `leaseId` on the generation, held by the View; false when the generation is gone. */
  async retain(generation: ViewGeneration, viewId: string, leaseId: string): Promise<boolean> {
    try {
      await requestOnGeneration(this.bus, ConnRetain, generation, { leaseId, holder: { kind: 'view', id: viewId } });
      return true;
    } catch (error) {
      if (isGenerationGone(error)) return false;
      // The reply may be lost after the owner retained: give the lease back before failing.
      await this.release(generation, leaseId).catch(() => undefined);
      throw error;
    }
  }

  /** Gives the View's reference back (token-idempotent); a gone generation holds nothing any more. */
  async release(generation: ViewGeneration, leaseId: string): Promise<void> {
    try {
      await requestOnGeneration(this.bus, ConnRelease, generation, { leaseId });
    } catch (error) {
      if (!isGenerationGone(error)) throw error;
    }
  }

  /** Whether the generation still lives on its owner. */
  async generationAlive(generation: ViewGeneration): Promise<boolean> {
    try {
      await requestOnGeneration(this.bus, ConnGenerationState, generation, {});
      return true;
    } catch (error) {
      if (isGenerationGone(error)) return false;
      throw error;
    }
  }

  /** The one policed `resources/read` of a View, asked of the generation's owner (the resource policy checked here, both sides). */
  readResource(generation: GenerationAddress & { toolsetId?: string }, read: PolicedRead): Promise<PolicedReadResult> {
    return readUnderPolicy(this.bus, generation, read, {
      timeoutMs: this.timeouts.readMs,
      // A server that answered outside the policy or the limits is worth an operator's look.
      onRefused: (error) =>
        this.logger.warn({ toolsetId: generation.toolsetId, uri: read.uri, error: error.message }, 'resource read rejected by response-side policy'),
    });
  }
}
