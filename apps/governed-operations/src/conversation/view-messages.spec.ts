import { BusServer, type BusClient, type NatsTransport } from '@apphost/bus';
import type { CoordinationStore } from '@apphost/coordination';
import {
  AppHostError,
  GovernedCloseView,
  GovernedViewRpc,
  JSON_RPC_CODE_BY_ERROR,
  GovernedOpenView,
  GovernedRunToolBatch,
  LifecycleCreateSession,
  LifecycleDecideMessage,
  LifecycleDeleteSession,
  LifecycleEndViewMessages,
  LifecycleListMessages,
  LifecycleRecordMessage,
  type HostProfile,
  type JsonRpcResponse,
  type LiveViewAnswer,
  type PendingMessage,
  type ResponseOf,
} from '@apphost/contracts';
import { defineService, FAULT_POINTS, openCoordinationStore, type FaultPoints } from '@apphost/runtime';
import { bootService, connectTestTransport, sleep, type ServiceUnderTest } from '@apphost/testing';
import { batchConfig } from '../governed.config';
import type { GovernedFaultPoint } from '../governed.faults';
import { GovernedOperationsModule } from '../governed.module';
import { VIEW_RPC_PORTS } from '../governed.tokens';
import { principal, session, startFakePlane, testProfile, type FakePlane, type FakeState } from '../test/fake-plane';
import { startStoreProcesses, type StoreProcesses } from '../test/store-processes';
import { live, openView, viewCaller, widgetOf } from '../test/view-helpers';
import { recordingPorts, type RecordingPorts } from '../test/view-rpc-ports';
import { RpcMessageAdmission } from '../view-rpc/rpc-admission';
import { ViewBarrier } from '../view-rpc/view-barrier';
import { ViewCollaborators } from '../views/view-collaborators';

/**
 * `ui/message` through the real View RPC handler: governed-operations (real View records in Redis, real admission,
 * barrier and message pipeline) on the fake plane's private NATS, its lifecycle-store message operations relayed to
 * the REAL lifecycle-store process (PostgreSQL), where every assertion about a message is read back. The session `s1`
 * exists in both: the fake answers its liveness, the real store holds its messages (incarnation 1 in both).
 */
jest.setTimeout(30_000);

type Answer = ResponseOf<typeof GovernedViewRpc>;

/** Short enough that a never-accepted record is seen expired within a test. */
const ACCEPT_WITHIN_MS = 1_000;
const PER_MINUTE = 3;
const MAX_BYTES = 1_024;

describe('ui/message (real bus handler, fake collaborators, real lifecycle-store, NATS, PostgreSQL and Redis)', () => {
  let plane: FakePlane;
  let state: FakeState;
  let stores: StoreProcesses;
  let relayTransport: NatsTransport;
  let relay: BusServer;
  let ports: RecordingPorts;
  let service: ServiceUnderTest;
  let client: BusClient;
  let faults: FaultPoints<GovernedFaultPoint>;

  beforeAll(async () => {
    [plane, stores] = await Promise.all([startFakePlane(), startStoreProcesses()]);
    state = plane.state;
    // The plane's lifecycle-store is a fake: its message operations go to the real store process.
    relayTransport = await connectTestTransport('message-relay', { natsUrl: plane.natsUrl });
    relay = new BusServer({
      transport: relayTransport,
      instanceId: 'message-relay',
      queueGroup: 'message-relay',
      logger: { error: () => undefined, warn: () => undefined },
    });
    relay.register(LifecycleRecordMessage, (r) => stores.bus.request(LifecycleRecordMessage, r));
    relay.register(LifecycleDecideMessage, (r) => stores.bus.request(LifecycleDecideMessage, r));
    relay.register(LifecycleEndViewMessages, (r) => stores.bus.request(LifecycleEndViewMessages, r));
    relay.start();
    await relay.ready();
    await stores.bus.request(LifecycleCreateSession, { session, creationOperationId: 'op-view-messages' });

    await plane.stopService();
    ports = { ...recordingPorts(), admission: new RpcMessageAdmission() };
    const definition = defineService({
      name: 'governed-operations',
      requires: ['redis'],
      config: batchConfig,
      openStores: async (context) => [await openCoordinationStore(context)],
      imports: (context, opened) => [
        GovernedOperationsModule.register(context.config, context.logger, opened[0] as CoordinationStore, context.config.INSTANCE_ID, {
          provide: VIEW_RPC_PORTS,
          useValue: ports,
        }),
      ],
    });
    service = await bootService(definition, plane.prefix, {
      NATS_URL: plane.natsUrl,
      GOVERNED_VIEW_SWEEP_MS: '0',
      GOVERNED_MESSAGE_ACCEPT_WITHIN_MS: String(ACCEPT_WITHIN_MS),
      GOVERNED_MESSAGE_PER_VIEW_PER_MINUTE: String(PER_MINUTE),
      GOVERNED_MESSAGE_MAX_BYTES: String(MAX_BYTES),
    });
    client = service.client;
    faults = service.running.app.get<FaultPoints<GovernedFaultPoint>>(FAULT_POINTS);
  }, 180_000);

  afterAll(async () => {
    await service?.stop();
    await relay?.stop(100);
    await relayTransport?.close();
    await plane?.stop();
    await stores?.stop();
  }, 60_000);

  afterEach(() => jest.restoreAllMocks());

  beforeEach(async () => {
    await plane.reset();
    ports.reset();
    faults.disarm();
    state.incarnation = 1; // the real store's session
  });

  /** A live View under a profile that offers `message: { text }` (unless `offered` is false) with the given policy. */
  const newView = async (policy: 'accept' | 'confirm', offered = true): Promise<LiveViewAnswer> => {
    const base = testProfile();
    const fields: Partial<HostProfile> = {
      hostCapabilities: { ...base.hostCapabilities, ...(offered ? { message: { text: true } } : {}) },
      callbackPolicy: { ...base.callbackPolicy, message: policy },
    };
    state.profile = fields;
    return live(await openView(client, await widgetOf(client)));
  };
  const send = (view: LiveViewAnswer, id: number | string, params: unknown, attested: 'message'[] = []): Promise<Answer> => {
    const message = { jsonrpc: '2.0', id, method: 'ui/message', params };
    return client.request(
      GovernedViewRpc,
      { caller: viewCaller, viewId: view.viewId, grant: view.grant, message, bytes: JSON.stringify(message).length, attested },
      { timeoutMs: 10_000 },
    );
  };
  const text = (t: string) => ({ role: 'user', content: [{ type: 'text', text: t }] });
  const responseOf = (answer: Answer): JsonRpcResponse => {
    if (answer.kind !== 'response') throw new Error(`expected a JSON-RPC response, got ${answer.kind}`);
    return answer.response;
  };
  const errorOf = (answer: Answer) => {
    const response = responseOf(answer);
    if (!('error' in response)) throw new Error(`expected an error, got ${JSON.stringify(response)}`);
    return response.error;
  };
  /** Every listed message of the View (RECORDED is never listed: a never-accepted one shows once EXPIRED). */
  const messagesOf = async (view: LiveViewAnswer): Promise<PendingMessage[]> =>
    (await stores.bus.request(LifecycleListMessages, { session, limit: 100 })).messages.filter((m) => m.viewId === view.viewId);
  const afterAcceptWindow = () => sleep(ACCEPT_WITHIN_MS + 300);
  const close = (view: LiveViewAnswer) => client.request(GovernedCloseView, { caller: viewCaller, viewId: view.viewId });

  describe('accepted', () => {
    it('accept policy: `{}` only once the message is ACCEPTED, with its exact identity; one audit entry without content', async () => {
      const view = await newView('accept');
      expect(view.hostCapabilities).toMatchObject({ message: { text: {} } });
      const answer = await send(view, 1, {
        role: 'user',
        content: [{ type: 'text', text: 'Summarize the run', annotations: { priority: 1 }, _meta: { a: 1 } }],
      });
      expect(responseOf(answer)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
      const [message, ...others] = await messagesOf(view);
      expect(others).toEqual([]);
      expect(message).toEqual({
        messageId: expect.stringMatching(/^msg-[0-9a-f]{32}$/),
        session,
        incarnation: 1,
        state: 'ACCEPTED',
        role: 'user',
        content: [{ type: 'text', text: 'Summarize the run' }],
        viewId: view.viewId,
        widgetId: view.widget.widgetId,
        nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
        toolsetId: 'ts',
        bindingRevision: 'v1.k1.abcd',
        bindingGeneration: 1,
        principal: { tenant: 'acme', subject: 'alice' },
        rejection: null,
        claimExpiresAt: null,
        invocationId: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(ports.seen.audit).toEqual([
        {
          method: 'ui/message',
          tool: null,
          uri: null,
          decision: 'executed',
          outcome: 'ok',
          reason: null,
          replayed: false,
          durationMs: expect.any(Number),
          seal: null,
        },
      ]);
      expect(JSON.stringify(ports.seen.audit)).not.toContain('Summarize');
    });

    it('accepts the one-block form of content (as the specification writes it) as that block', async () => {
      const view = await newView('accept');
      expect(responseOf(await send(view, 1, { role: 'user', content: { type: 'text', text: 'one block' } }))).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
      expect((await messagesOf(view)).map((m) => m.content)).toEqual([[{ type: 'text', text: 'one block' }]]);
    });

    it('confirm policy: refused without the user’s attestation (nothing recorded), accepted with it', async () => {
      const view = await newView('confirm');
      const error = errorOf(await send(view, 1, text('unconfirmed')));
      expect(error).toMatchObject({
        code: JSON_RPC_CODE_BY_ERROR.PERMISSION_DENIED,
        data: { code: 'PERMISSION_DENIED', reason: 'MESSAGE_CONFIRMATION_REQUIRED' },
      });
      expect(ports.seen.audit).toMatchObject([
        { method: 'ui/message', decision: 'denied', outcome: 'PERMISSION_DENIED', reason: 'MESSAGE_CONFIRMATION_REQUIRED' },
      ]);
      expect(responseOf(await send(view, 2, text('confirmed'), ['message']))).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
      await afterAcceptWindow();
      expect((await messagesOf(view)).map((m) => [m.state, m.content[0]?.text])).toEqual([['ACCEPTED', 'confirmed']]);
    });

    it('a JSON-RPC id reused after completion is a new message (no replay key)', async () => {
      const view = await newView('accept');
      for (let i = 0; i < 2; i++) expect(responseOf(await send(view, 'same-id', text('again')))).toEqual({ jsonrpc: '2.0', id: 'same-id', result: {} });
      const messages = await messagesOf(view);
      expect(messages.map((m) => m.state)).toEqual(['ACCEPTED', 'ACCEPTED']);
      expect(new Set(messages.map((m) => m.messageId)).size).toBe(2);
      expect(new Set(messages.map((m) => m.nonce)).size).toBe(2);
    });
  });

  describe('refused before anything is recorded', () => {
    it.each([
      ['a role other than user', { role: 'assistant', content: [{ type: 'text', text: 'x' }] }, -32602, 'INVALID_ARGUMENT', 'RPC_INVALID_PARAMS'],
      ['no content', { role: 'user', content: [] }, -32602, 'INVALID_ARGUMENT', 'RPC_INVALID_PARAMS'],
      [
        'an image block',
        { role: 'user', content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }] },
        -32602,
        'INVALID_ARGUMENT',
        'MODALITY_NOT_ADVERTISED',
      ],
      ['text over the size limit', text('é'.repeat(MAX_BYTES / 2 + 1)), JSON_RPC_CODE_BY_ERROR.PAYLOAD_TOO_LARGE, 'PAYLOAD_TOO_LARGE', 'MESSAGE_TOO_LARGE'],
      [
        'more blocks than a message holds',
        { role: 'user', content: Array.from({ length: 33 }, () => ({ type: 'text', text: 'x' })) },
        JSON_RPC_CODE_BY_ERROR.PAYLOAD_TOO_LARGE,
        'PAYLOAD_TOO_LARGE',
        'MESSAGE_TOO_LARGE',
      ],
    ])('%s', async (_what, params, code, errorCode, reason) => {
      const view = await newView('accept');
      expect(errorOf(await send(view, 1, params))).toMatchObject({ code, data: { code: errorCode, reason } });
      await afterAcceptWindow();
      expect(await messagesOf(view)).toEqual([]);
    });

    it('text when the profile does not offer message: MODALITY_NOT_ADVERTISED', async () => {
      const view = await newView('accept', false);
      expect(errorOf(await send(view, 1, text('hello')))).toMatchObject({
        code: -32602,
        data: { reason: 'MODALITY_NOT_ADVERTISED', modality: 'text', advertised: [] },
      });
      expect(ports.seen.audit).toMatchObject([{ method: 'ui/message', decision: 'denied', outcome: 'INVALID_ARGUMENT' }]);
      await afterAcceptWindow();
      expect(await messagesOf(view)).toEqual([]);
    });

    it(`the per-View message rate: ${PER_MINUTE} a minute, then RESOURCE_EXHAUSTED RPC_RATE_LIMITED (retryable)`, async () => {
      const view = await newView('accept');
      for (let i = 1; i <= PER_MINUTE; i++) expect(responseOf(await send(view, i, text(`m${i}`)))).toMatchObject({ result: {} });
      const error = errorOf(await send(view, 99, text('one too many')));
      expect(error).toMatchObject({
        code: JSON_RPC_CODE_BY_ERROR.RESOURCE_EXHAUSTED,
        data: { code: 'RESOURCE_EXHAUSTED', reason: 'RPC_RATE_LIMITED', retryable: true, scope: 'message', limit: PER_MINUTE },
      });
      // Another View of the session has its own window.
      const other = await newView('accept');
      expect(responseOf(await send(other, 1, text('other view')))).toMatchObject({ result: {} });
      await afterAcceptWindow();
      expect((await messagesOf(view)).map((m) => m.content[0]?.text)).toEqual(['m1', 'm2', 'm3']);
    });

    it('the message rate counts only what passed the barrier, and a refused re-check gives its count back', async () => {
      const view = await newView('accept');
      const barrier = service.running.app.get(ViewBarrier);
      const check = barrier.check.bind(barrier);
      const unavailable = new AppHostError('UNAVAILABLE', 'the registry did not answer', { retryable: true });
      // The barrier refuses (a store that did not answer: the View stays live), as many times as the rate allows.
      const refusing = jest.spyOn(barrier, 'check').mockRejectedValue(unavailable);
      for (let i = 1; i <= PER_MINUTE; i++) expect(errorOf(await send(view, i, text(`refused ${i}`)))).toMatchObject({ data: { code: 'UNAVAILABLE' } });
      // Passes the barrier, refused by the re-check after the record (rejected, not the conversation's).
      refusing.mockImplementationOnce(check).mockRejectedValueOnce(
        new AppHostError('PERMISSION_DENIED', 'the principal was revoked', {
          details: { reason: 'PRINCIPAL_REVOKED' },
        }),
      );
      expect(errorOf(await send(view, 10, text('re-check refused')))).toMatchObject({ data: { reason: 'PRINCIPAL_REVOKED' } });
      refusing.mockImplementation(check);
      // None of those counted: the whole rate is still there.
      for (let i = 1; i <= PER_MINUTE; i++) expect(responseOf(await send(view, 20 + i, text(`m${i}`)))).toMatchObject({ result: {} });
      expect(errorOf(await send(view, 99, text('one too many')))).toMatchObject({ data: { reason: 'RPC_RATE_LIMITED' } });
      expect((await messagesOf(view)).map((m) => [m.state, m.content[0]?.text])).toEqual([
        ['ACCEPTED', 'm1'],
        ['ACCEPTED', 'm2'],
        ['ACCEPTED', 'm3'],
        ['REJECTED', 're-check refused'],
      ]);
    });
  });

  describe('teardown: a queued, not yet accepted message dies with the View', () => {
    it('torn down before the record: VIEW_REVOKED (TORN_DOWN), nothing recorded', async () => {
      const view = await newView('accept');
      await close(view);
      expect(errorOf(await send(view, 1, text('too late')))).toMatchObject({
        code: JSON_RPC_CODE_BY_ERROR.FAILED_PRECONDITION,
        data: { code: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED', revocation: 'TORN_DOWN' },
      });
      await afterAcceptWindow();
      expect(await messagesOf(view)).toEqual([]);
    });

    it('torn down between record and accept: the record is REJECTED (VIEW_TORN_DOWN), the View told VIEW_REVOKED', async () => {
      const view = await newView('accept');
      faults.arm('message.after-record', async () => {
        await close(view);
      });
      expect(errorOf(await send(view, 1, text('raced')))).toMatchObject({
        data: { code: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED', revocation: 'TORN_DOWN' },
      });
      await afterAcceptWindow();
      expect(await messagesOf(view)).toMatchObject([{ state: 'REJECTED', rejection: 'VIEW_TORN_DOWN', content: [{ text: 'raced' }] }]);
      expect(await stores.bus.request(LifecycleListMessages, { session, state: 'ACCEPTED', limit: 100 })).toMatchObject({
        messages: expect.not.arrayContaining([expect.objectContaining({ viewId: view.viewId })]),
      });
    });

    it('torn down after the re-check, before the accept: the teardown fence rejects it at the accept (VIEW_TORN_DOWN)', async () => {
      const view = await newView('accept');
      faults.arm('message.before-accept', async () => {
        await close(view);
      });
      expect(errorOf(await send(view, 1, text('fenced')))).toMatchObject({
        data: { code: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED', revocation: 'TORN_DOWN' },
      });
      expect(await messagesOf(view)).toMatchObject([{ state: 'REJECTED', rejection: 'VIEW_TORN_DOWN', content: [{ text: 'fenced' }] }]);
      expect(ports.seen.audit).toMatchObject([{ method: 'ui/message', outcome: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED' }]);
    });

    it('a teardown whose message fence cannot reach the lifecycle-store still ends the View', async () => {
      const view = await newView('accept');
      const peers = service.running.app.get(ViewCollaborators);
      const fence = jest.spyOn(peers, 'endViewMessages').mockRejectedValue(new AppHostError('UNAVAILABLE', 'lifecycle-store did not answer'));
      await expect(close(view)).resolves.toEqual({ closed: true });
      expect(fence).toHaveBeenCalledTimes(2); // before the mark, and once more after it
      expect(errorOf(await send(view, 1, text('after the end')))).toMatchObject({ data: { reason: 'VIEW_REVOKED', revocation: 'TORN_DOWN' } });
    });

    it('rebound between record and accept: REJECTED with the revocation’s own reason (TOOLSET_REBOUND)', async () => {
      const view = await newView('accept');
      faults.arm('message.after-record', () => {
        state.bindingGenerations['ts'] = 2;
      });
      expect(errorOf(await send(view, 1, text('rebound')))).toMatchObject({ data: { reason: 'VIEW_REVOKED', revocation: 'TOOLSET_REBOUND' } });
      expect(await messagesOf(view)).toMatchObject([{ state: 'REJECTED', rejection: 'TOOLSET_REBOUND' }]);
    });
  });

  it('a session deleted after the barrier (the record finds it gone): the View is revoked SESSION_DELETED', async () => {
    const other = { ...session, sessionId: 's-deleted' };
    await stores.bus.request(LifecycleCreateSession, { session: other, creationOperationId: 'op-s-deleted' });
    state.profile = {
      callbackPolicy: { ...testProfile().callbackPolicy, message: 'accept' },
      hostCapabilities: { ...testProfile().hostCapabilities, message: { text: true } },
    };
    const turn = await client.request(
      GovernedRunToolBatch,
      { principal, session: other, invocationId: 'inv-deleted', calls: [{ functionCallId: 'fc-deleted', tool: 'nonce-view', arguments: { q: 'x' } }] },
      { timeoutMs: 20_000 },
    );
    const view = live(
      await client.request(
        GovernedOpenView,
        { caller: viewCaller, session: other, eventId: turn.eventId, functionCallId: 'fc-deleted' },
        { timeoutMs: 30_000 },
      ),
    );
    // The fake still answers the session ACTIVE to the barrier; the real store, which records the message, has deleted it.
    await stores.bus.request(LifecycleDeleteSession, { session: other });
    expect(errorOf(await send(view, 1, text('into the void')))).toMatchObject({ data: { reason: 'VIEW_REVOKED', revocation: 'SESSION_DELETED' } });
    expect(errorOf(await send(view, 2, text('again')))).toMatchObject({ data: { reason: 'VIEW_REVOKED', revocation: 'SESSION_DELETED' } });
  });

  describe('a crash between record and response', () => {
    it('before the accept: the View gets no `{}`, the record expires (never delivered)', async () => {
      const view = await newView('accept');
      faults.arm('message.after-record');
      expect(errorOf(await send(view, 1, text('crashed early')))).toMatchObject({ data: { code: 'INTERNAL' } });
      expect(await messagesOf(view)).toEqual([]); // RECORDED: not the conversation's
      await afterAcceptWindow();
      expect(await messagesOf(view)).toMatchObject([{ state: 'EXPIRED', content: [{ text: 'crashed early' }] }]);
    });

    it('after the accept: the message exists and belongs to the conversation (a retry would be a new one)', async () => {
      const view = await newView('accept');
      faults.arm('message.after-accept');
      expect(errorOf(await send(view, 1, text('crashed late')))).toMatchObject({ data: { code: 'INTERNAL' } });
      await afterAcceptWindow();
      expect(await messagesOf(view)).toMatchObject([{ state: 'ACCEPTED', content: [{ text: 'crashed late' }] }]);
    });
  });
});
