import type { BusClient } from '@apphost/bus';
import type { CoordinationStore } from '@apphost/coordination';
import {
  AppHostError,
  GovernedCloseView,
  GovernedViewRpc,
  JSON_RPC_CODE_BY_ERROR,
  type JsonRpcResponse,
  type LiveViewAnswer,
  type ResponseOf,
  type ViewCaller,
} from '@apphost/contracts';
import { defineService, openCoordinationStore } from '@apphost/runtime';
import { bootService, STATEFUL_NONCE_RESOURCE, type ServiceUnderTest } from '@apphost/testing';
import { batchConfig } from '../governed.config';
import { GovernedOperationsModule } from '../governed.module';
import { VIEW_RPC_PORTS } from '../governed.tokens';
import { generationIdOf, startFakePlane, type FakePlane, type FakeState } from '../test/fake-plane';
import { live, openView, viewCaller, widgetOf } from '../test/view-helpers';
import { recordingPorts, type RecordingPorts } from '../test/view-rpc-ports';

/**
 * The View RPC through the real bus handler: governed-operations (its real View records in Redis, barrier and
 * operations) on the fake plane's private NATS, with recording in-memory ports (`test/view-rpc-ports.ts`). Each View
 * is opened by the service itself from a real tool batch, bound to the fake owner's app-safe generation.
 */
jest.setTimeout(30_000);

const UI_GENERATION = generationIdOf(true);

type Answer = ResponseOf<typeof GovernedViewRpc>;

describe('governed-operations View RPC (real bus handler, fake collaborators, real Redis)', () => {
  let plane: FakePlane;
  let state: FakeState;
  let ports: RecordingPorts;
  let service: ServiceUnderTest;
  let client: BusClient;

  beforeAll(async () => {
    plane = await startFakePlane();
    state = plane.state;
    // This spec's own governed-operations, the only one serving: the plane's, with View RPC ports.
    await plane.stopService();
    ports = recordingPorts();
    const definition = defineService({
      name: 'governed-operations',
      requires: ['redis'],
      config: batchConfig,
      openStores: async (context) => [await openCoordinationStore(context)],
      imports: (context, stores) => [
        GovernedOperationsModule.register(context.config, context.logger, stores[0] as CoordinationStore, context.config.INSTANCE_ID, {
          provide: VIEW_RPC_PORTS,
          useValue: ports,
        }),
      ],
    });
    service = await bootService(definition, plane.prefix, { NATS_URL: plane.natsUrl, GOVERNED_VIEW_SWEEP_MS: '0' });
    client = service.client;
  }, 90_000);

  afterAll(async () => {
    await service?.stop();
    await plane?.stop();
  });

  beforeEach(async () => {
    await plane.reset();
    ports.reset();
  });

  const newView = async (): Promise<LiveViewAnswer> => live(await openView(client, await widgetOf(client)));
  const rpc = (view: LiveViewAnswer, message: unknown, who: ViewCaller = viewCaller, grant = view.grant): Promise<Answer> =>
    client.request(GovernedViewRpc, { caller: who, viewId: view.viewId, grant, message, bytes: JSON.stringify(message).length }, { timeoutMs: 10_000 });
  const call = (view: LiveViewAnswer, id: number | string, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
    rpc(view, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } });
  const responseOf = (answer: Answer): JsonRpcResponse => {
    if (answer.kind !== 'response') throw new Error(`expected a JSON-RPC response, got ${answer.kind}`);
    return answer.response;
  };
  const errorOf = (answer: Answer) => {
    const response = responseOf(answer);
    if (!('error' in response)) throw new Error(`expected an error, got ${JSON.stringify(response)}`);
    return response.error;
  };
  const resultOf = (answer: Answer) => {
    const response = responseOf(answer);
    if (!('result' in response)) throw new Error(`expected a result, got ${JSON.stringify(response)}`);
    return response.result;
  };
  const toolCalls = () => state.calls.filter((c) => c.name !== 'nonce-view'); // the widget's own model call is not the View's

  describe('authentication (bus errors)', () => {
    it('an unknown View, and a View of another user, are NOT_FOUND', async () => {
      const view = await newView();
      const message = { jsonrpc: '2.0', id: 1, method: 'ping' };
      await expect(rpc({ ...view, viewId: `vw-${'0'.repeat(32)}` }, message)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const stranger: ViewCaller = { principal: { tenant: 'acme', subject: 'bob', scopes: ['view'] }, userId: 'bob' };
      await expect(rpc(view, message, stranger)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(ports.seen.audit).toEqual([]);
    });

    it('a wrong grant, or the right grant held by another principal of the user, is PERMISSION_DENIED VIEW_GRANT_INVALID', async () => {
      const view = await newView();
      const message = { jsonrpc: '2.0', id: 1, method: 'ping' };
      await expect(rpc(view, message, viewCaller, 'A'.repeat(43))).rejects.toMatchObject({
        code: 'PERMISSION_DENIED',
        details: { reason: 'VIEW_GRANT_INVALID' },
      });
      const other: ViewCaller = { principal: { tenant: 'acme', subject: 'alice-2', scopes: ['view'] }, userId: 'alice' };
      await expect(rpc(view, message, other)).rejects.toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'VIEW_GRANT_INVALID' } });
      expect(ports.seen.slots.admitted).toBe(0);
    });

    it('a placeholder View has no grant: PERMISSION_DENIED VIEW_GRANT_INVALID', async () => {
      const placeholder = await openView(client, await widgetOf(client, 'legacy-widget'));
      expect(placeholder.mode).toBe('placeholder');
      const request = { caller: viewCaller, viewId: placeholder.viewId, grant: 'A'.repeat(43), message: { jsonrpc: '2.0', id: 1, method: 'ping' }, bytes: 40 };
      await expect(client.request(GovernedViewRpc, request)).rejects.toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'VIEW_GRANT_INVALID' } });
    });
  });

  describe('tools/call', () => {
    it('runs an app-only tool on exactly the View’s generation, under the in-flight call id, and audits it', async () => {
      const view = await newView();
      const answer = await call(view, 7, 'app-poll', { n: 2 });
      expect(responseOf(answer)).toEqual({
        jsonrpc: '2.0',
        id: 7,
        result: { content: [{ type: 'text', text: 'polled' }], structuredContent: { load: 0.5 } },
      });
      expect(toolCalls()).toEqual([{ name: 'app-poll', callId: 'vc-1', generationId: UI_GENERATION, timeoutMs: expect.any(Number) }]);
      expect(toolCalls()[0].timeoutMs).toBeLessThanOrEqual(10_000);
      expect(state.callArgs.at(-1)).toEqual({ n: 2 });
      expect(state.log).toContain(`app-catalog:${UI_GENERATION}`);
      expect(ports.seen.audit).toEqual([
        {
          method: 'tools/call',
          tool: 'app-poll',
          uri: null,
          decision: 'executed',
          outcome: 'ok',
          reason: null,
          replayed: false,
          durationMs: expect.any(Number),
          seal: null,
        },
      ]);
      expect(ports.seen.slots).toEqual({ admitted: 1, released: 1 });
    });

    it('a UI-associated tool’s result is handed to the audit for sealing; an isError result is a normal result', async () => {
      const view = await newView();
      const answer = await call(view, 'w', 'widget', {});
      expect(resultOf(answer)).toMatchObject({ content: [{ type: 'text', text: 'shown' }] });
      expect(ports.seen.audit[0].seal).toMatchObject({ tool: { nativeName: 'widget', resourceUri: 'ui://fake/widget.html' }, arguments: {} });
    });

    it.each([
      ['a model-only tool', 'model-only'],
      ['an unknown tool', 'no-such-tool'],
      ['a tool of another toolset of the session', 'guarded'],
    ])('refuses %s: PERMISSION_DENIED TOOL_NOT_APP_VISIBLE, nothing executed, a denial audited', async (_what, name) => {
      const view = await newView();
      const error = errorOf(await call(view, 1, name, {}));
      expect(error).toMatchObject({ code: JSON_RPC_CODE_BY_ERROR.PERMISSION_DENIED, data: { code: 'PERMISSION_DENIED', reason: 'TOOL_NOT_APP_VISIBLE' } });
      expect(toolCalls()).toEqual([]);
      expect(ports.seen.audit).toMatchObject([
        { method: 'tools/call', tool: name, decision: 'denied', outcome: 'PERMISSION_DENIED', reason: 'TOOL_NOT_APP_VISIBLE' },
      ]);
    });

    it('refuses a tool whose visibility no longer includes app (the catalog is fresh on every call)', async () => {
      const view = await newView();
      resultOf(await call(view, 1, 'app-poll', { n: 1 }));
      state.visibility['app-poll'] = ['model'];
      expect(errorOf(await call(view, 2, 'app-poll', { n: 1 })).data.reason).toBe('TOOL_NOT_APP_VISIBLE');
      expect(toolCalls()).toHaveLength(1);
    });

    it('checks the arguments against the tool’s inputSchema: -32602 TOOL_ARGUMENTS_INVALID, nothing executed', async () => {
      const view = await newView();
      const error = errorOf(await call(view, 1, 'app-poll', { n: -1, extra: true }));
      expect(error).toMatchObject({ code: -32602, data: { code: 'INVALID_ARGUMENT', reason: 'TOOL_ARGUMENTS_INVALID', tool: 'app-poll' } });
      expect(toolCalls()).toEqual([]);
    });

    it('an invalid CallToolResult is FAILED_PRECONDITION TOOL_RESULT_INVALID (executed, nothing delivered)', async () => {
      const view = await newView();
      const error = errorOf(await call(view, 1, 'app-broken', {}));
      expect(error.data).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'TOOL_RESULT_INVALID' });
      expect(ports.seen.audit).toMatchObject([{ decision: 'executed', outcome: 'FAILED_PRECONDITION', reason: 'TOOL_RESULT_INVALID' }]);
    });
  });

  describe('the barrier, immediately before any effect', () => {
    const expectRevoked = async (view: LiveViewAnswer, revocation: string) => {
      const error = errorOf(await call(view, 1, 'app-poll', { n: 1 }));
      expect(error).toMatchObject({
        code: JSON_RPC_CODE_BY_ERROR.FAILED_PRECONDITION,
        data: { code: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED', revocation },
      });
      expect(toolCalls()).toEqual([]);
      // Ended: the record says why, so the next message is refused at once (without asking again).
      expect(errorOf(await rpc(view, { jsonrpc: '2.0', id: 2, method: 'ping' })).data).toMatchObject({ reason: 'VIEW_REVOKED', revocation });
    };

    it('a revoked principal: PERMISSION_DENIED PRINCIPAL_REVOKED, the View ended', async () => {
      const view = await newView();
      state.revokedPrincipals.add('acme/alice');
      expect(errorOf(await call(view, 1, 'app-poll', { n: 1 })).data).toMatchObject({ code: 'PERMISSION_DENIED', reason: 'PRINCIPAL_REVOKED' });
      state.revokedPrincipals.clear();
      expect(errorOf(await call(view, 2, 'app-poll', { n: 1 })).data).toMatchObject({ reason: 'VIEW_REVOKED', revocation: 'PRINCIPAL_REVOKED' });
      expect(toolCalls()).toEqual([]);
    });

    it('the session in another incarnation: VIEW_REVOKED SESSION_DELETED', async () => {
      const view = await newView();
      state.incarnation = 4;
      await expectRevoked(view, 'SESSION_DELETED');
    });

    it('the toolset rebound or revoked: VIEW_REVOKED TOOLSET_REBOUND / TOOLSET_REVOKED', async () => {
      const rebound = await newView();
      const other = await newView();
      state.bindingGenerations['ts'] = 2;
      await expectRevoked(rebound, 'TOOLSET_REBOUND');
      state.bindingGenerations = {};
      state.toolsetStates['ts'] = 'REVOKING';
      await expectRevoked(other, 'TOOLSET_REVOKED');
    });

    it('a lease that ran out: VIEW_REVOKED LEASE_EXPIRED', async () => {
      state.profile = { views: { leaseMs: 1 } };
      const view = await newView();
      await new Promise((resolve) => setTimeout(resolve, 5));
      await expectRevoked(view, 'LEASE_EXPIRED');
    });

    it('the generation found gone by the call itself: the View ended GENERATION_GONE, counted as nothing run', async () => {
      const view = await newView();
      const error = errorOf(await call(view, 1, 'gone', {}));
      expect(error.data).toMatchObject({ reason: 'VIEW_REVOKED', revocation: 'GENERATION_GONE' });
      expect(ports.seen.audit).toMatchObject([{ tool: 'gone', decision: 'denied', outcome: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED' }]);
      expect(errorOf(await rpc(view, { jsonrpc: '2.0', id: 2, method: 'ping' })).data).toMatchObject({ revocation: 'GENERATION_GONE' });
    });

    it('a closed View: VIEW_REVOKED TORN_DOWN', async () => {
      const view = await newView();
      await client.request(GovernedCloseView, { caller: viewCaller, viewId: view.viewId });
      await expectRevoked(view, 'TORN_DOWN');
    });

    it('a resources/read outside the resource policy: PERMISSION_DENIED RESOURCE_POLICY_DENIED, nothing read', async () => {
      const view = await newView();
      const reads = state.log.filter((l) => l.startsWith('read-resource')).length;
      const error = errorOf(await rpc(view, { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'file:///etc/passwd' } }));
      expect(error).toMatchObject({ code: -32003, data: { code: 'PERMISSION_DENIED', reason: 'RESOURCE_POLICY_DENIED' } });
      expect(state.log.filter((l) => l.startsWith('read-resource'))).toHaveLength(reads);
      expect(ports.seen.audit).toMatchObject([{ method: 'resources/read', uri: 'file:///etc/passwd', decision: 'denied' }]);
    });

    it('rate limits refuse before anything runs (counted by the limiter and logged, not audited one by one)', async () => {
      const view = await newView();
      ports.refuse.limiter = true;
      const error = errorOf(await call(view, 1, 'app-poll', { n: 1 }));
      expect(error).toMatchObject({
        code: JSON_RPC_CODE_BY_ERROR.RESOURCE_EXHAUSTED,
        data: { code: 'RESOURCE_EXHAUSTED', reason: 'RPC_RATE_LIMITED', retryable: true },
      });
      expect(toolCalls()).toEqual([]);
      expect(ports.seen.audit).toEqual([]);
    });

    it('a View torn down while its call ran: the result is not delivered nor sealed (VIEW_REVOKED TORN_DOWN)', async () => {
      const view = await newView();
      let open!: () => void;
      state.callGate = new Promise((resolve) => (open = resolve));
      const pending = call(view, 1, 'widget', {});
      await waitFor(() => toolCalls().length === 1);
      await client.request(GovernedCloseView, { caller: viewCaller, viewId: view.viewId });
      open();
      expect(errorOf(await pending).data).toMatchObject({ reason: 'VIEW_REVOKED', revocation: 'TORN_DOWN' });
      expect(ports.seen.audit).toMatchObject([{ tool: 'widget', decision: 'executed', outcome: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED', seal: null }]);
    });
  });

  describe('the other methods', () => {
    it('resources/read of an allowed URI: canonical, on the View’s generation, through catalog-policy', async () => {
      const view = await newView();
      const uri = 'UI://Fake/widget.html';
      const answer = await rpc(view, { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } });
      expect(resultOf(answer)).toEqual({
        contents: [{ uri: 'ui://fake/widget.html', mimeType: 'text/html;profile=mcp-app', text: '<html>ui://fake/widget.html</html>' }],
      });
      expect(state.log.filter((l) => l.startsWith('read-resource')).at(-1)).toBe(`read-resource:${UI_GENERATION}`);
      expect(ports.seen.audit).toMatchObject([{ method: 'resources/read', uri: 'ui://fake/widget.html', decision: 'executed', outcome: 'ok' }]);
    });

    it('tools/list answers the app catalog’s raw declarations only (no model-only tool, no other toolset’s)', async () => {
      const view = await newView();
      const { tools } = resultOf(await rpc(view, { jsonrpc: '2.0', id: 1, method: 'tools/list' })) as { tools: { name: string }[] };
      const names = tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['app-poll', 'widget', 'nonce-view']));
      expect(names).not.toContain('model-only');
      expect(names).not.toContain('guarded');
      expect(tools.find((t) => t.name === 'app-poll')).toEqual({ name: 'app-poll', inputSchema: expect.objectContaining({ required: ['n'] }) });
    });

    it('resources/list and resources/templates/list keep only what the resource policy allows', async () => {
      state.profile = {
        resourcePolicy: {
          revision: '2',
          entries: [
            { match: 'prefix', uri: 'ui://fake/docs' },
            { match: 'prefix', uri: 'ui://' },
          ],
        },
      };
      const view = await newView();
      state.resources = [{ uri: 'ui://fake/docs/a.html' }, { uri: 'file:///etc/passwd' }, { uri: 'not a uri' }];
      state.resourceTemplates = [{ uriTemplate: 'ui://fake/docs/{id}' }, { uriTemplate: 'file:///{path}' }, { uriTemplate: 'https://x.example/{p}' }];
      expect(resultOf(await rpc(view, { jsonrpc: '2.0', id: 1, method: 'resources/list' }))).toEqual({ resources: [{ uri: 'ui://fake/docs/a.html' }] });
      expect(resultOf(await rpc(view, { jsonrpc: '2.0', id: 2, method: 'resources/templates/list' }))).toEqual({
        resourceTemplates: [{ uriTemplate: 'ui://fake/docs/{id}' }],
      });
    });

    it('ping answers {} after the liveness checks, calling no tool', async () => {
      const view = await newView();
      expect(responseOf(await rpc(view, { jsonrpc: '2.0', id: 'p', method: 'ping' }))).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
      expect(toolCalls()).toEqual([]);
      expect(ports.seen.audit).toMatchObject([{ method: 'ping', decision: 'executed', outcome: 'ok' }]);
    });
  });

  describe('JSON-RPC shape, notifications, cancellation, idempotency', () => {
    it('a malformed message is -32600 and an unknown method -32601, both with data.code, neither audited', async () => {
      const view = await newView();
      expect(responseOf(await rpc(view, [{ jsonrpc: '2.0', id: 1, method: 'ping' }]))).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'not one JSON-RPC 2.0 message', data: { code: 'INVALID_ARGUMENT', reason: 'RPC_INVALID_REQUEST', retryable: false } },
      });
      expect(errorOf(await rpc(view, { jsonrpc: '2.0', id: 9, method: 'sampling/createMessage' }))).toMatchObject({
        code: -32601,
        data: { code: 'NOT_FOUND', reason: 'RPC_METHOD_NOT_FOUND' },
      });
      expect(responseOf(await rpc(view, { jsonrpc: '2.0', id: 9, method: 'nope' })).id).toBe(9);
      expect(ports.seen.audit).toEqual([]);
    });

    it('a notification is accepted and handed to its port', async () => {
      const view = await newView();
      const answer = await rpc(view, { jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { width: 10, height: 20 } });
      expect(answer).toEqual({ kind: 'accepted' });
      expect(ports.seen.notifications).toEqual([{ method: 'ui/notifications/size-changed', params: { width: 10, height: 20 } }]);
    });

    it('a notification admission refuses (an unknown method) is still never answered: accepted, nothing handled', async () => {
      const view = await newView();
      expect(await rpc(view, { jsonrpc: '2.0', method: 'notifications/unknown', params: {} })).toEqual({ kind: 'accepted' });
      expect(ports.seen.notifications).toEqual([]);
    });

    it('notifications/cancelled of a live request: the request answers cancelled (no late response), the live id is free again', async () => {
      const view = await newView();
      let open!: () => void;
      state.callGate = new Promise((resolve) => (open = resolve));
      const pending = call(view, 5, 'app-poll', { n: 1 });
      await waitFor(() => toolCalls().length === 1);
      // A second live request with the same id is a protocol error.
      expect(errorOf(await call(view, 5, 'app-poll', { n: 1 }))).toMatchObject({ code: -32600, data: { reason: 'RPC_ID_IN_USE' } });
      expect(await rpc(view, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } })).toEqual({ kind: 'accepted' });
      open();
      expect(await pending).toEqual({ kind: 'cancelled' });
      expect(ports.seen.cancels).toEqual([5]);
      expect(ports.seen.audit.map((a) => a.outcome)).toEqual(['INVALID_ARGUMENT', 'cancelled']);
      state.callGate = undefined;
      resultOf(await call(view, 5, 'app-poll', { n: 1 })); // reuse after completion is legal
    });

    it('an idempotency key replays the one retained outcome (audited replayed) and conflicts for another identity', async () => {
      const view = await newView();
      const meta = { 'io.apphost/idempotency-key': 'poll-1' };
      const first = resultOf(await call(view, 1, 'app-poll', { n: 3 }, meta));
      expect(resultOf(await call(view, 2, 'app-poll', { n: 3 }, meta))).toEqual(first);
      expect(toolCalls()).toHaveLength(1);
      expect(errorOf(await call(view, 3, 'app-poll', { n: 4 }, meta))).toMatchObject({
        code: JSON_RPC_CODE_BY_ERROR.CONFLICT,
        data: { code: 'CONFLICT', reason: 'IDEMPOTENCY_KEY_CONFLICT' },
      });
      expect(toolCalls()).toHaveLength(1);
      expect(ports.seen.audit.map((a) => [a.decision, a.replayed, a.outcome])).toEqual([
        ['executed', false, 'ok'],
        ['executed', true, 'ok'],
        ['denied', false, 'CONFLICT'],
      ]);
      expect(ports.seen.scopes[0]).toMatchObject({
        viewId: view.viewId,
        toolsetId: 'ts',
        generationId: UI_GENERATION,
        incarnation: 3,
        bindingRevision: 'v1.k1.abcd',
        policyRevision: null,
      });
    });

    it('a retained outcome is delivered only after a fresh barrier: a replay after a rebind is denied', async () => {
      const view = await newView();
      const meta = { 'io.apphost/idempotency-key': 'poll-2' };
      resultOf(await call(view, 1, 'app-poll', { n: 1 }, meta));
      state.bindingGenerations['ts'] = 2;
      expect(errorOf(await call(view, 2, 'app-poll', { n: 1 }, meta)).data).toMatchObject({ reason: 'VIEW_REVOKED', revocation: 'TOOLSET_REBOUND' });
      expect(ports.seen.audit.map((a) => [a.decision, a.replayed])).toEqual([
        ['executed', false],
        ['denied', false],
      ]);
      expect(ports.seen.scopes).toHaveLength(1);
    });

    it('a duplicate that waited for the first use is delivered its outcome only after a fresh barrier', async () => {
      const view = await newView();
      const meta = { 'io.apphost/idempotency-key': 'poll-3' };
      resultOf(await call(view, 1, 'app-poll', { n: 1 }, meta));
      // The toolset is rebound while the duplicate waits (after its first barrier passed).
      ports.hooks.retained = () => (state.bindingGenerations['ts'] = 2);
      expect(errorOf(await call(view, 2, 'app-poll', { n: 1 }, meta)).data).toMatchObject({ reason: 'VIEW_REVOKED', revocation: 'TOOLSET_REBOUND' });
      expect(ports.seen.audit.map((a) => [a.decision, a.replayed])).toEqual([
        ['executed', false],
        ['denied', false],
      ]);
    });

    it('an UNAVAILABLE the call may have produced after it was sent is the key’s outcome: a retry replays it, never runs again', async () => {
      const view = await newView();
      const meta = { 'io.apphost/idempotency-key': 'flaky-1' };
      const first = errorOf(await call(view, 1, 'app-unavailable', {}, meta));
      expect(first.data).toMatchObject({ code: 'UNAVAILABLE' });
      expect(errorOf(await call(view, 2, 'app-unavailable', {}, meta))).toEqual(first);
      expect(toolCalls()).toHaveLength(1);
      expect(ports.seen.audit.map((a) => [a.decision, a.replayed])).toEqual([
        ['executed', false],
        ['executed', true],
      ]);
    });

    it('a cancel recorded before dispatch: nothing runs, the request answers cancelled, the key stays free', async () => {
      const view = await newView();
      const meta = { 'io.apphost/idempotency-key': 'cancel-1' };
      ports.refuse.cancelOnBegin = true;
      expect(await call(view, 1, 'app-poll', { n: 1 }, meta)).toEqual({ kind: 'cancelled' });
      expect(toolCalls()).toEqual([]);
      expect(ports.seen.audit).toMatchObject([{ decision: 'denied', outcome: 'cancelled' }]);
      ports.refuse.cancelOnBegin = false;
      resultOf(await call(view, 2, 'app-poll', { n: 1 }, meta));
      expect(toolCalls()).toHaveLength(1);
    });

    it('recording the idempotent outcome is retried: a store blip does not let the key run again', async () => {
      const view = await newView();
      const meta = { 'io.apphost/idempotency-key': 'blip-1' };
      ports.refuse.completeFailures = 2;
      const first = resultOf(await call(view, 1, 'app-poll', { n: 1 }, meta));
      expect(resultOf(await call(view, 2, 'app-poll', { n: 1 }, meta))).toEqual(first);
      expect(toolCalls()).toHaveLength(1);
    });

    it('an audit that fails never loses the result', async () => {
      const view = await newView();
      ports.refuse.audit = true;
      expect(resultOf(await call(view, 1, 'app-poll', { n: 1 }))).toMatchObject({ structuredContent: { load: 0.5 } });
    });

    it('reads are idempotent under the resource-policy revision too', async () => {
      const view = await newView();
      const meta = { 'io.apphost/idempotency-key': 'read-1' };
      const read = { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: STATEFUL_NONCE_RESOURCE, _meta: meta } };
      resultOf(await rpc(view, read));
      expect(ports.seen.scopes[0].policyRevision).toBe('1/1');
    });
  });

  // State-only rounds are continued by the app-safe connection itself (libs/mcp, tested there and end to end with
  // the real `stepper`): whatever `input_required` reaches the service fails closed.
  describe('multi-round-trip tools (MRTR) on the app-safe connection', () => {
    it('an input_required answer fails closed: INPUT_REQUIRED_DENIED, nothing continued', async () => {
      const view = await newView();
      expect(errorOf(await call(view, 1, 'app-ask', {})).data).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'INPUT_REQUIRED_DENIED' });
      expect(errorOf(await call(view, 2, 'app-stepper', { rounds: 1 })).data).toMatchObject({ reason: 'INPUT_REQUIRED_DENIED' });
      expect(toolCalls().map((c) => c.continuation)).toEqual([undefined, undefined]);
    });
  });

  // Last: restarting the owner ends every generation the earlier tests' Views were bound to.
  describe('the owner of the View’s generation gone', () => {
    it('the generation gone (its owner restarted): VIEW_REVOKED GENERATION_GONE', async () => {
      const view = await newView();
      await plane.restartOwner();
      const error = errorOf(await call(view, 1, 'app-poll', { n: 1 }));
      expect(error.data).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED', revocation: 'GENERATION_GONE' });
      expect(toolCalls()).toEqual([]);
      expect(errorOf(await rpc(view, { jsonrpc: '2.0', id: 2, method: 'ping' })).data).toMatchObject({ revocation: 'GENERATION_GONE' });
    });

    it('a retained read is not replayed once the generation is gone (the barrier asks the owner for every target)', async () => {
      const view = await newView();
      const meta = { 'io.apphost/idempotency-key': 'read-gone' };
      const read = { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: STATEFUL_NONCE_RESOURCE, _meta: meta } };
      resultOf(await rpc(view, read));
      const reads = state.log.filter((l) => l.startsWith('read-resource')).length;
      await plane.restartOwner();
      // The replay would call nothing upstream: only the barrier's own question finds the generation gone.
      const error = errorOf(await rpc(view, { ...read, id: 2 }));
      expect(error.data).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED', revocation: 'GENERATION_GONE' });
      expect(state.log.filter((l) => l.startsWith('read-resource'))).toHaveLength(reads);
      expect(ports.seen.audit.map((a) => [a.decision, a.replayed])).toEqual([
        ['executed', false],
        ['denied', false],
      ]);
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new AppHostError('DEADLINE_EXCEEDED', 'the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
