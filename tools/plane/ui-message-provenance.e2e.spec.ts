import { randomBytes } from 'node:crypto';
import {
  GovernedClaimMessage,
  GovernedRunToolBatch,
  LifecycleConsumeMessage,
  LifecycleCreateSession,
  LifecycleDecideMessage,
  LifecycleListEvents,
  LifecycleRecordMessage,
  RegistryGetToolset,
  type SessionKey,
} from '@apphost/contracts';
import { dropSchemasWithPrefix, startFakeProviders, startPrivateNats, uniquePrefix, type PrivateNats } from '@apphost/testing';
import { bindNonceToolset, bootBatchPlane, type BatchPlane } from './tool-batches-harness';

/**
 * The provenance of a model turn a View's `ui/message` started, on the real plane (gateway aside): the message is
 * recorded, accepted, claimed through governed-operations and consumed by an invocation; that invocation's tool
 * batch lands in the ledger stamped `invocationOrigin: "mcp_app"` by the finalizer, another invocation's `user`.
 */
jest.setTimeout(120_000);

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const principal = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };

describe('ui/message provenance in the plane', () => {
  const prefix = uniquePrefix();
  let nats: PrivateNats;
  let providers: { stop(): Promise<void> };
  let plane: BatchPlane;

  beforeAll(async () => {
    nats = await startPrivateNats();
    providers = await startFakeProviders(nats.url, ['export-audit']);
    plane = await bootBatchPlane(nats.url, prefix, { CATALOG_APP_TOOLSETS: JSON.stringify({ 'nonce-app': [{ toolsetId: 'nonce' }] }) });
    await bindNonceToolset(plane.registry);
  }, 120_000);

  afterAll(async () => {
    await plane?.stop();
    await providers?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  async function consumedBy(session: SessionKey, invocationId: string): Promise<void> {
    const binding = await plane.registry.client.request(RegistryGetToolset, { toolsetId: 'nonce' });
    const messageId = `msg-${hex(16)}`;
    await plane.lifecycle.client.request(LifecycleRecordMessage, {
      message: {
        messageId,
        session,
        incarnation: 1,
        role: 'user',
        content: [{ type: 'text', text: 'the job finished; what next?' }],
        viewId: `vw-${hex(16)}`,
        widgetId: '2:fc-1',
        nonce: hex(16),
        toolsetId: 'nonce',
        bindingRevision: String(binding.bindingRevision),
        bindingGeneration: binding.bindingGeneration,
        principal: { tenant: 'acme', subject: 'alice' },
      },
      acceptWithinMs: 30_000,
    });
    await plane.lifecycle.client.request(LifecycleDecideMessage, { decision: 'accept', session, messageId });
    const { claimToken } = await plane.governed.client.request(GovernedClaimMessage, { principal, session, messageId, claimTtlMs: 30_000 });
    await plane.lifecycle.client.request(LifecycleConsumeMessage, { session, messageId, claimToken, invocationId });
  }

  it("the consuming invocation's tool events are mcp_app, another invocation's user", async () => {
    const session = { tenant: 'acme', appName: 'nonce-app', userId: 'alice', sessionId: `prov-${hex(3)}` };
    await plane.lifecycle.client.request(LifecycleCreateSession, { session, creationOperationId: `op-${session.sessionId}` });
    await consumedBy(session, 'inv-continued');
    const batch = (invocationId: string, functionCallId: string) =>
      plane.governed.client.request(
        GovernedRunToolBatch,
        { principal, session, invocationId, calls: [{ functionCallId, tool: 'whoami', arguments: {} }] },
        { timeoutMs: 60_000 },
      );
    const continued = await batch('inv-continued', 'w1');
    const typed = await batch('inv-typed', 'w2');

    const { events } = await plane.lifecycle.client.request(LifecycleListEvents, { session, limit: 100 });
    const origin = (eventId: number) => events.find((e) => e.id === eventId);
    expect(origin(continued.eventId)).toMatchObject({ invocationId: 'inv-continued', invocationOrigin: 'mcp_app', immediateCaller: 'model' });
    expect(origin(typed.eventId)).toMatchObject({ invocationId: 'inv-typed', invocationOrigin: 'user', immediateCaller: 'model' });
  });
});
