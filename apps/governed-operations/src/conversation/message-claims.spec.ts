import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { BusServer, type NatsTransport } from '@apphost/bus';
import {
  AppHostError,
  GovernedClaimMessage,
  LifecycleConsumeMessage,
  LifecycleCreateSession,
  LifecycleDecideMessage,
  LifecycleDeleteSession,
  LifecycleGetMessage,
  LifecycleRecordMessage,
  LifecycleSetPrincipalRevocation,
  RegistryGetToolset,
  type BindingState,
  type ErrorCode,
  type RequestOf,
  type SessionKey,
} from '@apphost/contracts';
import { bootService, connectTestTransport, expectAppError, type ServiceUnderTest } from '@apphost/testing';
import { governedOperationsService } from '../service';
import { startStoreProcesses, type StoreProcesses } from '../test/store-processes';

/**
 * governed-operations' `claim-message` on the real NATS, against the real lifecycle-store (its own process, on the
 * real PostgreSQL) and a registry stand-in whose toolset answers each test sets: every rejection the claim re-checks,
 * the happy path, and what a claim must never change.
 */
jest.setTimeout(60_000);

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const REVISION = 'v1.k1.abcd';
/** A cascade participant nobody serves: a deletion stays DELETING (its messages not yet purged). */
const ABSENT_PARTICIPANT = `tp-${hex(4)}-absent`;

async function expectRefused(work: Promise<unknown>, code: ErrorCode, details: Record<string, unknown> = {}): Promise<void> {
  const error = await expectAppError(work, code, details['reason'] as string | undefined);
  expect(error.details ?? {}).toMatchObject(details);
}

describe('governed-operations claim-message (real lifecycle-store process, real NATS and PostgreSQL)', () => {
  let stores: StoreProcesses;
  let governed: ServiceUnderTest;
  let registryTransport: NatsTransport;
  let registry: BusServer;
  let sessions = 0;
  const toolset: { state: BindingState; bindingGeneration: number; bindingRevision: string; failure: AppHostError | null } = {
    state: 'PROFILE_BOUND',
    bindingGeneration: 1,
    bindingRevision: REVISION,
    failure: null,
  };

  beforeAll(async () => {
    stores = await startStoreProcesses({ lifecycle: { LIFECYCLE_CASCADE_PARTICIPANTS: ABSENT_PARTICIPANT, LIFECYCLE_CASCADE_TIMEOUT_MS: '300' } });
    registryTransport = await connectTestTransport('claim-spec-registry');
    registry = new BusServer({
      transport: registryTransport,
      instanceId: 'claim-spec-registry',
      queueGroup: 'claim-spec-registry',
      logger: pino({ level: 'silent' }),
    });
    registry.register(RegistryGetToolset, (r) => {
      if (toolset.failure) throw toolset.failure;
      if (r.toolsetId !== 'ts') throw new AppHostError('NOT_FOUND', 'no such toolset');
      const bound = toolset.state === 'PROFILE_BOUND';
      return {
        toolsetId: r.toolsetId,
        profileId: bound ? 'p1' : null,
        state: toolset.state,
        bindingGeneration: toolset.bindingGeneration,
        bindingRevision: bound ? toolset.bindingRevision : null,
        readiness: [],
        transport: 'stdio' as const,
        protocol: 'auto' as const,
        liveConnections: 1,
        requireConfirmation: false,
      };
    });
    registry.start();
    await registry.ready();
    governed = await bootService(governedOperationsService, stores.prefix, {});
  }, 180_000);

  afterEach(() => {
    Object.assign(toolset, { state: 'PROFILE_BOUND', bindingGeneration: 1, bindingRevision: REVISION, failure: null });
  });

  afterAll(async () => {
    await governed?.stop();
    await registry?.stop(1000);
    await registryTransport?.close();
    await stores?.stop();
  }, 60_000);

  const runtime = (tenant = 'acme') => ({ tenant, subject: 'runtime-1', scopes: ['runtime'] });

  async function newSession(): Promise<SessionKey> {
    const session = { tenant: 'acme', appName: 'monitor', userId: 'alice', sessionId: `claim-${++sessions}-${hex(3)}` };
    await stores.bus.request(LifecycleCreateSession, { session, creationOperationId: `op-${session.sessionId}` });
    return session;
  }
  /** A message the View's ui/message made durable and accepted, from an opener of its own (revocable alone). */
  async function acceptedMessage(session: SessionKey) {
    const message: RequestOf<typeof LifecycleRecordMessage>['message'] = {
      messageId: `msg-${hex(16)}`,
      session,
      incarnation: 1,
      role: 'user',
      content: [{ type: 'text', text: 'the export is done' }],
      viewId: `vw-${hex(16)}`,
      widgetId: '2:fc-1',
      nonce: hex(16),
      toolsetId: 'ts',
      bindingRevision: REVISION,
      bindingGeneration: 1,
      principal: { tenant: 'acme', subject: `opener-${hex(4)}` },
    };
    await stores.bus.request(LifecycleRecordMessage, { message, acceptWithinMs: 30_000 });
    await stores.bus.request(LifecycleDecideMessage, { decision: 'accept', session, messageId: message.messageId });
    return message;
  }
  const claim = (session: SessionKey, messageId: string, principal = runtime()) =>
    governed.client.request(GovernedClaimMessage, { principal, session, messageId, claimTtlMs: 30_000 });
  const stored = async (session: SessionKey, messageId: string) => (await stores.bus.request(LifecycleGetMessage, { session, messageId })).message;

  it('claims an accepted message whose session, principal and binding hold: one claimer wins, the token consumes it', async () => {
    const session = await newSession();
    const message = await acceptedMessage(session);
    const [first, second] = await Promise.allSettled([claim(session, message.messageId), claim(session, message.messageId)]);
    const won = [first, second].flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
    const lost = [first, second].flatMap((a) => (a.status === 'rejected' ? [a.reason as unknown] : []));
    expect(won).toHaveLength(1);
    expect(lost).toEqual([expect.objectContaining({ code: 'CONFLICT', details: expect.objectContaining({ reason: 'MESSAGE_CLAIMED' }) })]);
    expect(won[0].message).toMatchObject({ messageId: message.messageId, state: 'CLAIMED', rejection: null });
    const consumed = await stores.bus.request(LifecycleConsumeMessage, {
      session,
      messageId: message.messageId,
      claimToken: won[0].claimToken,
      invocationId: 'inv-1',
    });
    expect(consumed.message).toMatchObject({ state: 'CONSUMED', invocationId: 'inv-1' });
  });

  it('a revoked opener rejects the message for good (MESSAGE_REJECTED PRINCIPAL_REVOKED), restored or not', async () => {
    const session = await newSession();
    const message = await acceptedMessage(session);
    await stores.bus.request(LifecycleSetPrincipalRevocation, { principal: message.principal, revoked: true });
    await expectRefused(claim(session, message.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_REJECTED', rejection: 'PRINCIPAL_REVOKED' });
    await expect(stored(session, message.messageId)).resolves.toMatchObject({ state: 'REJECTED', rejection: 'PRINCIPAL_REVOKED' });
    // Restoring the principal does not bring a rejected message back.
    await stores.bus.request(LifecycleSetPrincipalRevocation, { principal: message.principal, revoked: false });
    await expectRefused(claim(session, message.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_NOT_CLAIMABLE', state: 'REJECTED' });
  });

  it.each([
    ['a toolset no longer bound', { state: 'MODEL_ONLY' as const }, 'TOOLSET_REVOKED'],
    ['a rebound toolset (new generation)', { bindingGeneration: 2 }, 'TOOLSET_REBOUND'],
    ['a rebound toolset (new revision)', { bindingRevision: 'v2.k1.ef01' }, 'TOOLSET_REBOUND'],
  ])('%s rejects the message (%#)', async (_label, change, rejection) => {
    const session = await newSession();
    const message = await acceptedMessage(session);
    Object.assign(toolset, change);
    await expectRefused(claim(session, message.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_REJECTED', rejection });
    await expect(stored(session, message.messageId)).resolves.toMatchObject({ state: 'REJECTED', rejection });
  });

  it('a session being deleted (DELETING: its messages not yet purged) rejects the claim with SESSION_DELETED', async () => {
    const session = await newSession();
    const message = await acceptedMessage(session);
    // The cascade cannot reach its participant: the session stays DELETING, its messages not yet purged.
    await expectAppError(stores.bus.request(LifecycleDeleteSession, { session }));
    await expectRefused(claim(session, message.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_REJECTED', rejection: 'SESSION_DELETED' });
  });

  it('a check that cannot be made fails UNAVAILABLE (retryable) and changes nothing; a caller of another tenant gets NOT_FOUND', async () => {
    const session = await newSession();
    const message = await acceptedMessage(session);
    toolset.failure = new AppHostError('UNAVAILABLE', 'registry down');
    const error = await expectAppError(claim(session, message.messageId), 'UNAVAILABLE');
    expect(error.retryable).toBe(true);
    toolset.failure = null;
    await expectAppError(claim(session, message.messageId, runtime('globex')), 'NOT_FOUND');
    await expect(stored(session, message.messageId)).resolves.toMatchObject({ state: 'ACCEPTED', rejection: null });
    await expect(claim(session, message.messageId)).resolves.toMatchObject({ message: { state: 'CLAIMED' } });
  });

  it('a consumed message is never re-checked into REJECTED: the store answers MESSAGE_NOT_CLAIMABLE', async () => {
    const session = await newSession();
    const message = await acceptedMessage(session);
    const { claimToken } = await claim(session, message.messageId);
    await stores.bus.request(LifecycleConsumeMessage, { session, messageId: message.messageId, claimToken, invocationId: 'inv-2' });
    await stores.bus.request(LifecycleSetPrincipalRevocation, { principal: message.principal, revoked: true });
    await expectRefused(claim(session, message.messageId), 'FAILED_PRECONDITION', { reason: 'MESSAGE_NOT_CLAIMABLE', state: 'CONSUMED' });
    await expect(stored(session, message.messageId)).resolves.toMatchObject({ state: 'CONSUMED', invocationId: 'inv-2' });
    await expectAppError(claim(session, `msg-${hex(16)}`), 'NOT_FOUND');
  });
});
