import { BusServer } from '@apphost/bus';
import {
  AppHostError,
  CatalogClassifyBatch,
  ConnCallTool,
  ConnListTools,
  LifecycleAppendEvents,
  LifecycleFindCallEvent,
  LifecycleGetSession,
  RegistryGetToolset,
  SealedCommit,
  SealedCreate,
  SealedResultStoreDescribe,
  type BoundToolHandle,
  type LedgerEventInput,
  type ParsedRequestOf,
} from '@apphost/contracts';
import Redis from 'ioredis';
import { bootService, startPrivateNats, uniquePrefix, type ServiceUnderTest, connectTestTransport, TEST_REDIS_URL } from '@apphost/testing';
import { governedOperationsService } from '../service';

/**
 * governed-operations against recorded fake collaborators on a private NATS: the real service, bus and contracts;
 * lifecycle-store, catalog-policy, binding-registry (incl. the connection owner) and the sealed-result store are
 * fakes, so ordering and "nothing ran" are observable call by call. The whole plane with real servers is
 * `tools/plane/tool-batches.e2e.spec.ts`.
 */
const OWNER = 'fake-owner';
export const session = { tenant: 'acme', appName: 'app', userId: 'alice', sessionId: 's1' };
export const principal = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };
const hex = (n: number) => n.toString(16).padStart(32, '0');

function handle(name: string, ui: boolean, n: number, toolsetId = 'ts'): BoundToolHandle {
  return {
    handleId: `th_${hex(n)}`,
    toolsetId,
    nativeName: name,
    exposedName: name,
    declaration: { name },
    fingerprint: 'a'.repeat(64),
    visibility: ['model', 'app'],
    resourceUri: ui ? `ui://fake/${name}.html` : null,
    catalogGeneration: '1.abc',
    connectionClass: ui ? 'app-safe' : 'full',
    execution: { generationId: '00000000-0000-4000-8000-00000000000' + (ui ? '1' : '2'), fence: 1, ownerInstanceId: OWNER, bindingGeneration: 1 },
  };
}

export const TOOLS: Record<string, { ui: boolean; toolset?: string; result: () => Record<string, unknown> }> = {
  widget: { ui: true, result: () => ({ content: [{ type: 'text', text: 'shown' }], structuredContent: { secret: 's3cr3t' }, _meta: { m: 1 } }) },
  'bad-widget': { ui: true, result: () => ({ content: [] }) },
  gone: { ui: true, result: () => ({}) },
  drifty: { ui: true, result: () => ({ content: [{ type: 'text', text: 'never' }] }) },
  plain: { ui: false, result: () => ({ content: [{ type: 'text', text: 'plain' }], structuredContent: { kept: true }, _meta: { also: 'kept' } }) },
  // A profile-less (MODEL_ONLY) toolset: the legacy widget payload, no sealing.
  'legacy-widget': {
    ui: true,
    toolset: 'legacy',
    result: () => ({ content: [{ type: 'text', text: 'legacy' }], structuredContent: { full: true }, _meta: { m: 2 } }),
  },
  // A toolset whose confirmation policy holds `guarded` (and only it).
  guarded: { ui: true, toolset: 'careful', result: () => ({ content: [{ type: 'text', text: 'guarded ran' }], structuredContent: { s: 1 } }) },
  unguarded: { ui: true, toolset: 'careful', result: () => ({ content: [{ type: 'text', text: 'unguarded ran' }] }) },
};
const TOOLSETS: Record<string, { state: 'PROFILE_BOUND' | 'MODEL_ONLY'; requireConfirmation?: string[] }> = {
  ts: { state: 'PROFILE_BOUND' },
  legacy: { state: 'MODEL_ONLY' },
  careful: { state: 'PROFILE_BOUND', requireConfirmation: ['guarded'] },
};

/** What the fakes saw, and the knobs a test turns; `reset()` before each test. */
export interface FakeState {
  log: string[];
  appended: LedgerEventInput[];
  created: ParsedRequestOf<typeof SealedCreate>[];
  committed: ParsedRequestOf<typeof SealedCommit>[];
  callArgs: unknown[];
  /**
   * Injected failures: `create` fails every seal (`createTimes`: only that many, then seals succeed), `describe`
   * is the sealed store's readiness probe.
   */
  failures: { append?: AppHostError; create?: AppHostError; createTimes?: number; describe?: AppHostError };
  /** Pauses every tool call until it resolves (a batch held in flight). */
  callGate?: Promise<void>;
  /** Pauses classification until it resolves (a batch that holds its claims but has started no call). */
  classifyGate?: Promise<void>;
  /** Binding revisions that differ from the default `v1.k1.abcd`, by toolset. */
  revisions: Record<string, string>;
  /** The session's current incarnation (a recreated session has a higher one). */
  incarnation: number;
}

export interface FakePlane {
  state: FakeState;
  service: ServiceUnderTest;
  /** The private NATS and the store prefix, for a governed-operations process of the test's own (`spawnTs`). */
  natsUrl: string;
  prefix: string;
  /** Stops the in-process service (once), so a process of the test's own is the only one serving. */
  stopService(): Promise<void>;
  /** Clears what the fakes saw and the service's call-id claims (each test is a fresh turn). */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export async function startFakePlane(env: Record<string, string> = {}): Promise<FakePlane> {
  const state: FakeState = { log: [], appended: [], created: [], committed: [], callArgs: [], failures: {}, revisions: {}, incarnation: 3 };
  let records = 0;
  // Which session incarnation each appended event belongs to (`state.appended` is in the same order).
  const ledgerScopes: { sessionId: string; incarnation: number }[] = [];
  const nats = await startPrivateNats();
  const transport = await connectTestTransport('fakes', { natsUrl: nats.url });
  const fakes = new BusServer({ transport, instanceId: OWNER, queueGroup: 'fakes', logger: { error: () => undefined, warn: () => undefined } });
  fakes.register(LifecycleGetSession, (r) => {
    state.log.push('get-session');
    return {
      session: r.session,
      incarnation: state.incarnation,
      state: 'ACTIVE' as const,
      version: 2,
      adopted: false,
      updatedAt: new Date().toISOString(),
      cascade: null,
    };
  });
  fakes.register(CatalogClassifyBatch, async (r) => {
    state.log.push('classify');
    await state.classifyGate;
    const calls = r.calls.map((c, i) => {
      const tool = TOOLS[c.name];
      if (!tool) throw new AppHostError('FAILED_PRECONDITION', 'not in catalog', { details: { reason: 'TOOL_NOT_IN_CATALOG' } });
      return { callId: c.callId, name: c.name, uiAssociated: tool.ui, handle: handle(c.name, tool.ui, i + 1, tool.toolset) };
    });
    const kinds = new Set(calls.map((c) => c.uiAssociated));
    return {
      snapshotId: '00000000-0000-4000-8000-0000000000ff',
      snapshotDigest: 'b'.repeat(64),
      classification: kinds.size > 1 ? ('mixed' as const) : kinds.has(true) ? ('ui' as const) : ('non-ui' as const),
      calls,
      unavailable: [],
      unreachable: [],
      createdAt: new Date().toISOString(),
    };
  });
  fakes.register(RegistryGetToolset, (r) => {
    state.log.push('get-toolset');
    const { state: bindingState, requireConfirmation } = TOOLSETS[r.toolsetId];
    const bindingRevision = bindingState === 'PROFILE_BOUND' ? (state.revisions[r.toolsetId] ?? 'v1.k1.abcd') : null;
    return {
      toolsetId: r.toolsetId,
      profileId: bindingRevision ? 'p' : null,
      state: bindingState,
      bindingGeneration: 1,
      bindingRevision,
      readiness: [],
      transport: 'stdio' as const,
      protocol: 'auto' as const,
      liveConnections: 1,
      requireConfirmation,
    };
  });
  fakes.register(
    ConnCallTool,
    async (r) => {
      state.log.push(`call:${r.name}`);
      state.callArgs.push(r.arguments);
      await state.callGate;
      if (r.name === 'gone') throw new AppHostError('FAILED_PRECONDITION', 'generation gone', { details: { reason: 'CONNECTION_GENERATION_GONE' } });
      return { kind: 'complete' as const, result: TOOLS[r.name].result(), progress: [] };
    },
    { routing: 'instance', instanceSegment: 'conn' },
  );
  fakes.register(
    ConnListTools,
    () => {
      state.log.push('list');
      // `drifty` changed its input schema after classification; every other tool lists as admitted.
      return {
        tools: Object.keys(TOOLS).map((name) =>
          name === 'drifty' ? { name, inputSchema: { type: 'object', properties: { extra: { type: 'string' } } } } : { name },
        ),
        pages: 1,
        bytes: 100,
      };
    },
    { routing: 'instance', instanceSegment: 'conn' },
  );
  fakes.register(SealedCreate, (r) => {
    state.log.push(`seal:${r.scope.functionCallId}`);
    if (state.failures.create && (state.failures.createTimes === undefined || state.failures.createTimes-- > 0)) throw state.failures.create;
    state.created.push(r);
    return { ref: { recordId: `rec${String(++records).padStart(19, '0')}`, schemaVersion: 1 }, state: 'PENDING' as const, created: true };
  });
  fakes.register(LifecycleAppendEvents, (r) => {
    state.log.push('append');
    if (state.failures.append) throw state.failures.append;
    state.appended.push(...r.events);
    for (const _ of r.events) ledgerScopes.push({ sessionId: r.session.sessionId, incarnation: r.incarnation });
    if (r.provenance.path !== 'user-turn') throw new AppHostError('INVALID_ARGUMENT', `unexpected provenance ${r.provenance.path}`);
    return { incarnation: r.incarnation, eventIds: [41 + state.appended.length] };
  });
  fakes.register(LifecycleFindCallEvent, (r) => {
    const found = state.appended
      .map((event, i) => ({ event, eventId: 42 + i }))
      .find(
        ({ event, eventId }) =>
          eventId > r.afterEventId &&
          ledgerScopes[eventId - 42]?.sessionId === r.session.sessionId &&
          ledgerScopes[eventId - 42]?.incarnation === r.incarnation &&
          (r.invocationId === undefined || event.invocationId === r.invocationId) &&
          (r.answering === 'response' ? event.functionResponses : event.functionCalls)?.some((c) => c.id === r.callId),
      );
    if (!found) return { event: null };
    const { event, eventId } = found;
    return {
      event: {
        eventId,
        invocationId: event.invocationId ?? null,
        functionCalls: event.functionCalls ?? [],
        functionResponses: event.functionResponses ?? [],
        widgets: event.widgets ?? [],
        customMetadata: event.customMetadata ?? null,
      },
    };
  });
  fakes.register(SealedResultStoreDescribe, () => {
    if (state.failures.describe) throw state.failures.describe;
    return {
      service: 'sealed-result-store' as const,
      version: '0',
      instanceId: 'fake-sealed',
      transport: 'nats' as const,
      startedAt: new Date().toISOString(),
      stores: [{ kind: 'postgres' as const, name: 'sealed', ready: true }],
    };
  });
  fakes.register(SealedCommit, (r) => {
    state.log.push(`commit:${r.key.functionCallId}`);
    state.committed.push(r);
    return { ref: { recordId: r.key.recordId, schemaVersion: 1 }, state: 'COMMITTED' as const, eventId: r.key.eventId };
  });
  fakes.start();
  await fakes.ready();
  const prefix = uniquePrefix();
  const service = await bootService(governedOperationsService, prefix, { NATS_URL: nats.url, ...env });
  const redis = new Redis(env['REDIS_URL'] ?? TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let serviceStopped: Promise<void> | undefined;
  const stopService = () => (serviceStopped ??= service.stop());
  return {
    state,
    service,
    natsUrl: nats.url,
    prefix,
    stopService,
    reset: async () => {
      Object.assign(state, {
        log: [],
        appended: [],
        created: [],
        committed: [],
        callArgs: [],
        failures: {},
        revisions: {},
        incarnation: 3,
        callGate: undefined,
        classifyGate: undefined,
      });
      if (redis.status === 'wait') await redis.connect();
      const claims = await redis.keys(`apphost:${prefix}governed-operations:call-claim:*`);
      if (claims.length > 0) await redis.del(...claims);
    },
    stop: async () => {
      await stopService();
      redis.disconnect();
      await fakes.stop(100);
      await transport.close();
      await nats.stop();
    },
  };
}
