import { createHash } from 'node:crypto';
import { BusServer } from '@apphost/bus';
import {
  AppHostError,
  CatalogAppCatalog,
  CatalogClassifyBatch,
  CONNECTION_GENERATION_GONE,
  ConnCallTool,
  ConnGenerationState,
  ConnListResources,
  ConnReadResource,
  ConnListResourceTemplates,
  ConnListTools,
  ConnRelease,
  ConnRetain,
  ConnectionReasons,
  isWidgetDescriptor,
  LifecycleAppendEvents,
  LifecycleFindCallEvent,
  LifecycleFindConsumedMessage,
  LifecycleGetEvent,
  LifecycleGetPrincipalRevocation,
  LifecycleGetSession,
  LifecycleGetSessionStanding,
  LifecycleGetWidgetStanding,
  LifecycleOpenBatch,
  RegistryGetProfile,
  RegistryGetToolset,
  SealedCommit,
  SealedCreate,
  SealedResolve,
  SealedResultStoreDescribe,
  type AppendProvenance,
  type BindingState,
  type BoundToolHandle,
  type HostProfile,
  type LedgerEventInput,
  type ParsedRequestOf,
  type ResponseOf,
} from '@apphost/contracts';
import { McpConnection } from '@apphost/mcp';
import { canonicalizeUri } from '@apphost/policy';
import Redis from 'ioredis';
import {
  bootService,
  connectTestTransport,
  fixtureServerCommand,
  startPrivateNats,
  STATEFUL_NONCE_RESOURCE,
  TEST_REDIS_URL,
  uniquePrefix,
  type ServiceUnderTest,
} from '@apphost/testing';
import { SealedCommits } from '../calls/sealed-commits';
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

/** The generation id of the fake owner's app-safe (ui) or full generation in its `epoch` (a restarted owner has a new one). */
export function generationIdOf(ui: boolean, epoch = 0): string {
  return `00000000-0000-4000-8000-${epoch.toString(16).padStart(11, '0')}${ui ? '1' : '2'}`;
}

function handle(name: string, ui: boolean, n: number, toolsetId: string, epoch: number, bindingGeneration: number): BoundToolHandle {
  const tool = TOOLS[name];
  return {
    handleId: `th_${hex(n)}`,
    toolsetId,
    nativeName: name,
    exposedName: name,
    declaration: { name, ...tool?.declaration },
    fingerprint: 'a'.repeat(64),
    visibility: tool?.visibility ?? ['model', 'app'],
    resourceUri: ui ? (tool?.resourceUri ?? `ui://fake/${name}.html`) : null,
    catalogGeneration: '1.abc',
    connectionClass: ui ? 'app-safe' : 'full',
    execution: { generationId: generationIdOf(ui, epoch), fence: 1, ownerInstanceId: OWNER, bindingGeneration },
  };
}

export const TOOLS: Record<
  string,
  {
    ui: boolean;
    toolset?: string;
    resourceUri?: string;
    declaration?: Record<string, unknown>;
    /** Absent: `model` and `app`. */
    visibility?: ('model' | 'app')[];
    result: () => Record<string, unknown>;
  }
> = {
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
  // Views: its document is read from the real stateful-nonce fixture server over stdio; read-only, so replay-safe.
  'nonce-view': {
    ui: true,
    resourceUri: STATEFUL_NONCE_RESOURCE,
    declaration: {
      annotations: { readOnlyHint: true },
      _meta: { ui: { resourceUri: STATEFUL_NONCE_RESOURCE, csp: { connectDomains: ['https://api.example.com', '*'] }, prefersBorder: true } },
    },
    result: () => ({ content: [{ type: 'text', text: 'nonce' }], structuredContent: { full: 'only-the-view-sees-this' } }),
  },
  // View RPC: an app-only tool with an input schema, a model-only one, and one that answers an invalid result.
  'app-poll': {
    ui: false,
    visibility: ['app'],
    declaration: { inputSchema: { type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'], additionalProperties: false } },
    result: () => ({ content: [{ type: 'text', text: 'polled' }], structuredContent: { load: 0.5 } }),
  },
  'model-only': { ui: false, visibility: ['model'], result: () => ({ content: [{ type: 'text', text: 'model only' }] }) },
  'app-broken': { ui: false, visibility: ['app'], result: () => ({ content: [] }) },
  // Fails UNAVAILABLE after it ran (what the MCP client makes of an unknown error once the call may have been sent).
  'app-unavailable': { ui: false, visibility: ['app'], result: () => ({ content: [{ type: 'text', text: 'never' }] }) },
  // MRTR: `app-stepper {rounds, delayMs?}` answers `rounds` state-only rounds (each leg `delayMs` long), then how many it
  // saw echoed exactly; `app-ask` asks for input.
  'app-stepper': { ui: false, visibility: ['app'], result: () => ({ content: [{ type: 'text', text: 'stepped' }] }) },
  'app-ask': { ui: false, visibility: ['app'], result: () => ({ content: [{ type: 'text', text: 'never' }] }) },
};

/** A state the caller must echo byte for byte (spacing, quotes, a combining accent: any re-encoding changes it). */
export const stepperState = (round: number) => ` round=${round}  "e\u0301" \t✓ `;

/** One leg of `app-stepper`: a state-only round while rounds remain, then the echoed states (an inexact echo is an error result). */
function stepperLeg(args: Record<string, unknown>, continuation: { flowId: string; requestState?: string } | undefined) {
  const round = continuation ? Number(/round=(\d+)/.exec(continuation.requestState ?? '')?.[1] ?? 0) : 0;
  if (continuation && continuation.requestState !== stepperState(round))
    return { kind: 'complete' as const, result: { isError: true, content: [{ type: 'text', text: 'requestState not echoed exactly' }] }, progress: [] };
  if (round < Number(args['rounds'] ?? 0))
    return { kind: 'input_required' as const, flowId: 'step-1', round: round + 1, inputRequests: {}, requestState: stepperState(round + 1) };
  return { kind: 'complete' as const, result: { content: [{ type: 'text', text: 'stepped' }], structuredContent: { rounds: round } }, progress: [] };
}
const TOOLSETS: Record<string, { state: BindingState; requireConfirmation?: string[] }> = {
  ts: { state: 'PROFILE_BOUND' },
  legacy: { state: 'MODEL_ONLY' },
  careful: { state: 'PROFILE_BOUND', requireConfirmation: ['guarded'] },
};

/** What the fakes saw, and the knobs a test turns; `reset()` before each test. */
export interface FakeState {
  log: string[];
  /** The profile ids `get-profile` was asked for, in order (kept apart from `log`, whose order tests assert). */
  profileReads: string[];
  appended: LedgerEventInput[];
  /** The provenance of each append, in `appended`'s order. */
  provenances: AppendProvenance['path'][];
  /** Invocations that consumed a View's `ui/message` (lifecycle-store's `find-consumed-message` finds one for them). */
  consumedInvocations: Set<string>;
  /** How many `find-consumed-message` lookups were made (kept out of `log`, whose order tests assert). */
  originLookups: number;
  created: ParsedRequestOf<typeof SealedCreate>[];
  committed: ParsedRequestOf<typeof SealedCommit>[];
  callArgs: unknown[];
  /**
   * Injected failures: `create` fails every seal (`createTimes`: only that many, then seals succeed), `describe`
   * is the sealed store's readiness probe.
   */
  failures: {
    append?: AppHostError;
    findConsumed?: AppHostError;
    create?: AppHostError;
    createTimes?: number;
    describe?: AppHostError;
    retain?: AppHostError;
    release?: AppHostError;
  };
  /** Pauses every tool call until it resolves (a batch held in flight). */
  callGate?: Promise<void>;
  /** Pauses classification until it resolves (a batch that holds its claims but has started no call). */
  classifyGate?: Promise<void>;
  /** Binding revisions that differ from the default `v1.k1.abcd`, by toolset. */
  revisions: Record<string, string>;
  /** The session's current incarnation (a recreated session has a higher one). */
  incarnation: number;
  /** `get-session` answers NOT_FOUND (the session was deleted). */
  sessionGone: boolean;
  /** Views: principals lifecycle-store reports revoked (`tenant/subject`). */
  revokedPrincipals: Set<string>;
  /** Views: binding state and generation overrides, by toolset (a revoked or rebound toolset). */
  toolsetStates: Record<string, BindingState>;
  bindingGenerations: Record<string, number>;
  /** Views: what catalog-policy's `read-resource` answers for a URI (default: the fixture's real read, or one App item). */
  documents: Record<string, Record<string, unknown>[]>;
  /** Views: sealed records the store no longer has (NOT_FOUND), or whose digest fails (DATA_LOSS). */
  sealedMissing: Set<string>;
  sealedCorrupt: Set<string>;
  /** Views: the profile's fields over the default test profile. */
  profile: Partial<HostProfile>;
  /** Views: the references the owner holds, by generation id, then lease id. */
  leases: Map<string, Map<string, { kind: string; id: string }>>;
  /** The record id the sealed store gave each function call's record. */
  recordIds: Record<string, string>;
  /** Confirmation policy overrides, by toolset. */
  requireConfirmation: Record<string, string[]>;
  /**
   * Classify answers as catalog-policy does, with `toolsets` (each toolset's facts), so governed asks no
   * `get-toolset`. Off: an answer without them.
   */
  classifyAnswersFacts: boolean;
  /** View RPC: every tool call the owner served (its generation and call id). */
  calls: { name: string; callId: string; generationId: string; timeoutMs?: number; continuation?: Record<string, unknown> }[];
  /** View RPC: visibility overrides by tool (a tool whose visibility changed after bootstrap). */
  visibility: Record<string, ('model' | 'app')[]>;
  /** View RPC: what `list-resources` / `list-resource-templates` answer. */
  resources: { uri: string; name?: string }[];
  resourceTemplates: { uriTemplate: string; name?: string }[];
}

export interface FakePlane {
  state: FakeState;
  /** Ends the fake registry owner's process and starts it again: every generation it held is gone. */
  restartOwner(): Promise<void>;
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
  const state: FakeState = freshState();
  let records = 0;
  let ownerEpoch = 0;
  const sealedRecords = new Map<string, ParsedRequestOf<typeof SealedCreate>>();
  let nonceServer: Promise<McpConnection> | undefined;
  // Which session incarnation each appended event belongs to (`state.appended` is in the same order).
  const ledgerScopes: { sessionId: string; incarnation: number }[] = [];
  const nats = await startPrivateNats();
  const transport = await connectTestTransport('fakes', { natsUrl: nats.url });
  const fakes = new BusServer({ transport, instanceId: OWNER, queueGroup: 'fakes', logger: { error: () => undefined, warn: () => undefined } });
  const sessionOf = (session: ParsedRequestOf<typeof LifecycleGetSession>['session']) => ({
    session,
    incarnation: state.incarnation,
    state: 'ACTIVE' as const,
    version: 2,
    adopted: false,
    updatedAt: new Date().toISOString(),
    cascade: null,
  });
  const getSession = (r: ParsedRequestOf<typeof LifecycleGetSession>) => {
    state.log.push('get-session');
    if (state.sessionGone) throw new AppHostError('NOT_FOUND', 'no such session');
    return sessionOf(r.session);
  };
  fakes.register(LifecycleGetSession, getSession);
  // The two answers of `get-principal-revocation` and `get-session` in one request, as the store gives them.
  fakes.register(LifecycleGetSessionStanding, (r) => {
    state.log.push('get-session');
    return {
      revoked: state.revokedPrincipals.has(`${r.principal.tenant}/${r.principal.subject}`),
      session: state.sessionGone ? null : sessionOf(r.session),
    };
  });
  fakes.register(CatalogClassifyBatch, async (r) => {
    state.log.push('classify');
    await state.classifyGate;
    const calls = r.calls.map((c, i) => {
      const tool = TOOLS[c.name];
      if (!tool) throw new AppHostError('FAILED_PRECONDITION', 'not in catalog', { details: { reason: 'TOOL_NOT_IN_CATALOG' } });
      const toolsetId = tool.toolset ?? 'ts';
      return {
        callId: c.callId,
        name: c.name,
        uiAssociated: tool.ui,
        handle: handle(c.name, tool.ui, i + 1, toolsetId, ownerEpoch, state.bindingGenerations[toolsetId] ?? 1),
      };
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
      ...(state.classifyAnswersFacts
        ? {
            toolsets: [...new Set(calls.map((c) => c.handle.toolsetId))].map((toolsetId) => {
              const { liveConnections: _live, readiness: _readiness, transport: _transport, protocol: _protocol, ...facts } = toolsetStatus({ toolsetId });
              return facts;
            }),
          }
        : {}),
    };
  });
  fakes.register(RegistryGetToolset, (r) => {
    state.log.push('get-toolset');
    return toolsetStatus(r);
  });
  function toolsetStatus(r: { toolsetId: string }) {
    const known = TOOLSETS[r.toolsetId];
    if (!known) throw new AppHostError('NOT_FOUND', 'no such toolset');
    const { requireConfirmation } = known;
    const bindingState = state.toolsetStates[r.toolsetId] ?? known.state;
    const bindingRevision = bindingState === 'PROFILE_BOUND' ? (state.revisions[r.toolsetId] ?? 'v1.k1.abcd') : null;
    return {
      toolsetId: r.toolsetId,
      profileId: known.state === 'PROFILE_BOUND' ? profileIdOf(state.profile) : null,
      state: bindingState,
      bindingGeneration: state.bindingGenerations[r.toolsetId] ?? 1,
      bindingRevision,
      readiness: [],
      transport: 'stdio' as const,
      protocol: 'auto' as const,
      liveConnections: 1,
      requireConfirmation: state.requireConfirmation[r.toolsetId] ?? requireConfirmation,
    };
  }
  fakes.register(SealedCreate, (r) => {
    state.log.push(`seal:${r.scope.functionCallId}`);
    if (state.failures.create && (state.failures.createTimes === undefined || state.failures.createTimes-- > 0)) throw state.failures.create;
    state.created.push(r);
    const recordId = `rec${String(++records).padStart(19, '0')}`;
    sealedRecords.set(recordId, r);
    state.recordIds[r.scope.functionCallId] = recordId;
    return { ref: { recordId, schemaVersion: 1 }, state: 'PENDING' as const, created: true };
  });
  fakes.register(LifecycleAppendEvents, (r) => {
    state.log.push('append');
    if (state.failures.append) throw state.failures.append;
    state.appended.push(...r.events);
    for (const _ of r.events) ledgerScopes.push({ sessionId: r.session.sessionId, incarnation: r.incarnation });
    state.provenances.push(...r.events.map(() => r.provenance.path));
    if (r.provenance.path !== 'user-turn' && r.provenance.path !== 'ui-message')
      throw new AppHostError('INVALID_ARGUMENT', `unexpected provenance ${r.provenance.path}`);
    return { incarnation: r.incarnation, eventIds: [41 + state.appended.length] };
  });
  const findConsumed = (r: ParsedRequestOf<typeof LifecycleFindConsumedMessage>) => {
    state.originLookups++;
    if (state.failures.findConsumed) throw state.failures.findConsumed;
    if (!state.consumedInvocations.has(r.invocationId)) return { message: null };
    const at = new Date().toISOString();
    return {
      message: {
        messageId: `msg-${'0'.repeat(32)}`,
        session: r.session,
        incarnation: state.incarnation,
        state: 'CONSUMED' as const,
        role: 'user' as const,
        content: [{ type: 'text' as const, text: 'continue' }],
        viewId: `vw-${'0'.repeat(32)}`,
        widgetId: '42:fc-1',
        nonce: '0'.repeat(32),
        toolsetId: 'ts',
        bindingRevision: 'v1.k1.abcd',
        bindingGeneration: 1,
        principal: { tenant: principal.tenant, subject: principal.subject },
        rejection: null,
        claimExpiresAt: at,
        invocationId: r.invocationId,
        createdAt: at,
        updatedAt: at,
      },
    };
  };
  fakes.register(LifecycleFindConsumedMessage, findConsumed);
  const findCallEvent = (r: ParsedRequestOf<typeof LifecycleFindCallEvent>) => {
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
  };
  fakes.register(LifecycleFindCallEvent, findCallEvent);
  // The batch's opening reads in one request, as the ledger answers them: the same state, logs and failures.
  fakes.register(LifecycleOpenBatch, (r) => {
    const view = getSession({ session: r.session });
    const { message } = findConsumed({ session: r.session, invocationId: r.invocationId });
    const { event } = findCallEvent({
      session: r.session,
      incarnation: view.incarnation,
      callId: r.callId,
      answering: 'response',
      invocationId: r.invocationId,
      afterEventId: 0,
    });
    return { incarnation: view.incarnation, consumedMessage: message, event };
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
  fakes.register(SealedResolve, (r) => {
    state.log.push('resolve');
    const created = sealedRecords.get(r.key.recordId);
    if (!created || state.sealedMissing.has(r.key.recordId) || created.scope.functionCallId !== r.key.functionCallId)
      throw new AppHostError('NOT_FOUND', 'no such sealed record');
    if (state.sealedCorrupt.has(r.key.recordId)) throw new AppHostError('DATA_LOSS', 'digest mismatch', { details: { reason: 'DIGEST_MISMATCH' } });
    return { transfer: 'inline' as const, ref: { recordId: r.key.recordId, schemaVersion: 1 }, envelope: created.envelope };
  });
  fakes.register(LifecycleGetPrincipalRevocation, (r) => {
    const revoked = state.revokedPrincipals.has(`${r.principal.tenant}/${r.principal.subject}`);
    return { revoked, since: revoked ? new Date().toISOString() : null };
  });
  // The ledger's `get-event`: the call's widget on an appended event of this session and incarnation.
  const eventOf = (r: ParsedRequestOf<typeof LifecycleGetEvent>): ResponseOf<typeof LifecycleGetEvent> => {
    const index = r.eventId - 42;
    const event = state.appended[index];
    const scope = ledgerScopes[index];
    if (!event || scope?.sessionId !== r.session.sessionId || scope.incarnation !== r.incarnation) throw new AppHostError('NOT_FOUND', 'no such event');
    const response = event.functionResponses?.find((f) => f.id === r.functionCallId);
    const widget = (event.widgets ?? []).find((w) => (isWidgetDescriptor(w) ? w.correlation.functionCallId === r.functionCallId : response?.name === w.tool));
    if (!widget) throw new AppHostError('NOT_FOUND', 'no such call on the event');
    const descriptor = isWidgetDescriptor(widget) ? widget : null;
    return {
      incarnation: r.incarnation,
      eventId: r.eventId,
      functionCallId: r.functionCallId,
      toolsetId: descriptor?.toolsetId ?? null,
      bindingRevision: descriptor?.bindingRevision ?? null,
      sealedResultRef: descriptor?.sealedResultRef ?? null,
      widget,
      call: descriptor ? null : { name: (widget as { tool: string }).tool, args: (widget as { toolArgs: Record<string, unknown> }).toolArgs },
    };
  };
  fakes.register(LifecycleGetEvent, (r) => {
    state.log.push('get-event');
    return eventOf(r);
  });
  // `get-widget-standing`: the standing and, on an ACTIVE session, `get-event` on its incarnation, as the store gives them.
  fakes.register(LifecycleGetWidgetStanding, (r) => {
    state.log.push('get-session', 'get-event');
    const session = state.sessionGone ? null : sessionOf(r.session);
    const revoked = state.revokedPrincipals.has(`${r.principal.tenant}/${r.principal.subject}`);
    if (!session) return { revoked, session, event: null };
    try {
      return { revoked, session, event: { located: eventOf({ ...r, incarnation: session.incarnation }) } };
    } catch (error) {
      if (error instanceof AppHostError && error.code === 'NOT_FOUND') return { revoked, session, event: { missing: error.message } };
      throw error;
    }
  });
  fakes.register(RegistryGetProfile, (r) => {
    state.profileReads.push(r.profileId);
    return { profileId: r.profileId, profile: { ...testProfile(), ...state.profile } };
  });
  // catalog-policy's fresh app catalog of a View's generation: the toolset's tools whose visibility includes `app`.
  fakes.register(CatalogAppCatalog, (r) => {
    state.log.push(`app-catalog:${r.generation.generationId}`);
    if (r.generation.generationId !== generationIdOf(true, ownerEpoch) && r.generation.generationId !== generationIdOf(false, ownerEpoch))
      throw new AppHostError('FAILED_PRECONDITION', 'generation gone', {
        details: ConnectionReasons.details(CONNECTION_GENERATION_GONE, { generationId: r.generation.generationId }),
      });
    const tools = Object.entries(TOOLS)
      .filter(([, tool]) => (tool.toolset ?? 'ts') === r.generation.toolsetId)
      .map(([name, tool], i) => {
        const h = handle(name, tool.ui, i + 1, r.generation.toolsetId, ownerEpoch, r.generation.bindingGeneration);
        const visibility = state.visibility[name] ?? h.visibility;
        const { generationId, fence, ownerInstanceId, bindingGeneration } = r.generation;
        return { ...h, visibility, connectionClass: r.generation.connectionClass, execution: { generationId, fence, ownerInstanceId, bindingGeneration } };
      })
      .filter((h) => h.visibility.includes('app'));
    return { tools, excluded: [] };
  });
  fakes.register(SealedCommit, (r) => {
    state.log.push(`commit:${r.key.functionCallId}`);
    state.committed.push(r);
    return { ref: { recordId: r.key.recordId, schemaVersion: 1 }, state: 'COMMITTED' as const, eventId: r.key.eventId };
  });
  // The registry process that owns the connection generations: a server of its own, so a test can restart it.
  const startOwner = async (): Promise<BusServer> => {
    const owner = new BusServer({ transport, instanceId: OWNER, queueGroup: 'fake-owner', logger: { error: () => undefined, warn: () => undefined } });
    const epoch = ownerEpoch;
    // A generation of an earlier epoch died with the process that owned it.
    const live = (ref: { generationId: string }) => {
      if (ref.generationId !== generationIdOf(true, epoch) && ref.generationId !== generationIdOf(false, epoch))
        throw new AppHostError('FAILED_PRECONDITION', 'generation gone', {
          details: ConnectionReasons.details(CONNECTION_GENERATION_GONE, { generationId: ref.generationId }),
        });
      let leases = state.leases.get(ref.generationId);
      if (!leases) state.leases.set(ref.generationId, (leases = new Map()));
      return leases;
    };
    owner.register(
      ConnCallTool,
      async (r) => {
        live(r.ref);
        state.log.push(`call:${r.name}`);
        state.callArgs.push(r.arguments);
        state.calls.push({
          name: r.name,
          callId: r.callId,
          generationId: r.ref.generationId,
          ...(r.timeoutMs ? { timeoutMs: r.timeoutMs } : {}),
          ...(r.continuation ? { continuation: r.continuation } : {}),
        });
        await state.callGate;
        if (r.name === 'gone') throw new AppHostError('FAILED_PRECONDITION', 'generation gone', { details: { reason: 'CONNECTION_GENERATION_GONE' } });
        if (r.name === 'app-unavailable') throw new AppHostError('UNAVAILABLE', 'the MCP server connection failed');
        if (r.name === 'app-ask') return { kind: 'input_required' as const, flowId: 'ask-1', round: 1, inputRequests: { q: { method: 'elicitation/create' } } };
        if (r.name === 'app-stepper') {
          if (typeof r.arguments['delayMs'] === 'number') await new Promise((resolve) => setTimeout(resolve, r.arguments['delayMs'] as number));
          return stepperLeg(r.arguments, r.continuation);
        }
        return { kind: 'complete' as const, result: TOOLS[r.name].result(), progress: [] };
      },
      { routing: 'instance', instanceSegment: 'conn' },
    );
    owner.register(
      ConnListTools,
      (r) => {
        live(r.ref);
        state.log.push('list');
        // `drifty` changed its input schema after classification; every other tool lists as admitted.
        return {
          tools: Object.keys(TOOLS).map((name) =>
            name === 'drifty' ? { name, inputSchema: { type: 'object', properties: { extra: { type: 'string' } } } } : { name, ...TOOLS[name].declaration },
          ),
          pages: 1,
          bytes: 100,
        };
      },
      { routing: 'instance', instanceSegment: 'conn' },
    );
    // The owner's `resources/read` (governed-operations checks the resource policy on both sides): the real fixture
    // server's answer for its resource, a test's override, or one App item.
    owner.register(
      ConnReadResource,
      async (r) => {
        live(r.ref);
        state.log.push(`read-resource:${r.ref.generationId}`);
        let contents = state.documents[r.uri];
        if (!contents && r.uri === STATEFUL_NONCE_RESOURCE) {
          nonceServer ??= McpConnection.open({
            target: { kind: 'stdio', ...fixtureServerCommand('stateful-nonce'), env: {} },
            connectionClass: 'app-safe',
            advertiseUi: true,
            connectTimeoutMs: 20_000,
          });
          const read = await (await nonceServer).readResource(r.uri);
          contents = (read['contents'] as Record<string, unknown>[]).map((c) => ({ ...c, uri: canonicalizeUri(String(c['uri'])) }));
        }
        contents ??= [{ uri: r.uri, mimeType: 'text/html;profile=mcp-app', text: `<html>${r.uri}</html>` }];
        return { contents };
      },
      { routing: 'instance', instanceSegment: 'conn' },
    );
    owner.register(
      ConnListResources,
      (r) => {
        live(r.ref);
        state.log.push('list-resources');
        return { resources: state.resources, pages: 1, bytes: 100 };
      },
      { routing: 'instance', instanceSegment: 'conn' },
    );
    owner.register(
      ConnListResourceTemplates,
      (r) => {
        live(r.ref);
        state.log.push('list-resource-templates');
        return { resourceTemplates: state.resourceTemplates, pages: 1, bytes: 100 };
      },
      { routing: 'instance', instanceSegment: 'conn' },
    );
    owner.register(
      ConnRetain,
      (r) => {
        const leases = live(r.ref);
        state.log.push(`retain:${r.holder.kind}`);
        if (state.failures.retain) throw state.failures.retain;
        leases.set(r.leaseId, r.holder);
        return { references: leases.size };
      },
      { routing: 'instance', instanceSegment: 'conn' },
    );
    owner.register(
      ConnRelease,
      (r) => {
        const leases = live(r.ref);
        state.log.push('release');
        if (state.failures.release) throw state.failures.release;
        const released = leases.delete(r.leaseId);
        return { released, references: leases.size };
      },
      { routing: 'instance', instanceSegment: 'conn' },
    );
    owner.register(
      ConnGenerationState,
      (r) => {
        const leases = live(r.ref);
        const byHolderKind: Record<string, number> = {};
        for (const holder of leases.values()) byHolderKind[holder.kind] = (byHolderKind[holder.kind] ?? 0) + 1;
        return { references: leases.size, byHolderKind, inflight: 0, evictable: leases.size === 0 };
      },
      { routing: 'instance', instanceSegment: 'conn' },
    );
    owner.start();
    await owner.ready();
    return owner;
  };
  let owner = await startOwner();
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
    restartOwner: async () => {
      await owner.stop(100);
      ownerEpoch++;
      state.leases.clear();
      owner = await startOwner();
    },
    reset: async () => {
      // The previous test's commits run after its replies: they land before this test's state starts over.
      await service.running.app.get(SealedCommits).drain(10_000);
      Object.assign(state, { callGate: undefined, classifyGate: undefined, ...freshState() });
      ledgerScopes.length = 0; // in step with `state.appended`, which starts over
      if (redis.status === 'wait') await redis.connect();
      const claims = await redis.keys(`apphost:${prefix}governed-operations:call-claim:*`);
      if (claims.length > 0) await redis.del(...claims);
    },
    stop: async () => {
      await stopService();
      redis.disconnect();
      await fakes.stop(100);
      await owner.stop(100);
      if (nonceServer) await (await nonceServer).close();
      await transport.close();
      await nats.stop();
    },
  };
}

/** What a fake plane starts with, and what `reset` puts back. */
function freshState(): FakeState {
  return {
    log: [],
    profileReads: [],
    appended: [],
    provenances: [],
    consumedInvocations: new Set(),
    originLookups: 0,
    created: [],
    committed: [],
    callArgs: [],
    failures: {},
    revisions: {},
    incarnation: 3,
    sessionGone: false,
    ...freshViewState(),
  };
}

function freshViewState(): Pick<
  FakeState,
  | 'revokedPrincipals'
  | 'toolsetStates'
  | 'bindingGenerations'
  | 'documents'
  | 'sealedMissing'
  | 'sealedCorrupt'
  | 'profile'
  | 'leases'
  | 'recordIds'
  | 'requireConfirmation'
  | 'classifyAnswersFacts'
  | 'calls'
  | 'visibility'
  | 'resources'
  | 'resourceTemplates'
> {
  return {
    revokedPrincipals: new Set(),
    toolsetStates: {},
    bindingGenerations: {},
    documents: {},
    sealedMissing: new Set(),
    sealedCorrupt: new Set(),
    profile: {},
    leases: new Map(),
    recordIds: {},
    requireConfirmation: {},
    classifyAnswersFacts: false,
    calls: [],
    visibility: {},
    resources: [],
    resourceTemplates: [],
  };
}

/** The host profile toolset `ts` binds to (`p`): replay-safe by `readOnlyHint`, a one-minute View lease, outcomes kept 2 h. */
export function testProfile(): HostProfile {
  const ref = (service: 'gateway' | 'governed-operations' | 'binding-registry' | 'sealed-result-store' | 'lifecycle-store' | 'export-audit') => ({ service });
  return {
    extension: { mimeTypes: ['text/html;profile=mcp-app'] },
    hostCapabilities: { openLinks: false, serverTools: true, serverResources: true, logging: false },
    renderer: { id: 'apphost-reference-host', version: '1' },
    providers: {
      principalResolver: ref('gateway'),
      sessionAuthorizer: ref('governed-operations'),
      keyProvider: ref('binding-registry'),
      sealedResultStore: ref('sealed-result-store'),
      lifecycleStore: ref('lifecycle-store'),
      exportAuditStore: ref('export-audit'),
    },
    replayClassification: { source: 'profile', revision: '1' },
    callbackPolicy: { sampling: 'deny', elicitation: 'model-only', roots: 'deny' },
    connectionPolicy: { affinity: 'per-session', idleEvictMs: 60_000, maxLifetimeMs: 600_000 },
    resourcePolicy: { revision: '1', entries: [{ match: 'prefix', uri: 'ui://' }] },
    limits: {
      revision: '1',
      discovery: { maxPages: 8, maxItems: 2000, maxBytes: 1024 * 1024, maxTimeMs: 4000 },
      mrtr: { maxRounds: 2, maxTotalMs: 30_000 },
      callTimeoutMs: 20_000,
      readTimeoutMs: 20_000,
    },
    views: { leaseMs: 60_000 },
    idempotency: { retentionMs: 2 * 3600_000 },
    replay: { readOnlyHint: true },
  };
}

/** A stored profile is immutable by id (callers cache it): a test that changes the profile's fields gets another id. */
function profileIdOf(fields: Partial<HostProfile>): string {
  return Object.keys(fields).length === 0 ? 'p' : `p-${createHash('sha256').update(JSON.stringify(fields)).digest('hex').slice(0, 16)}`;
}
