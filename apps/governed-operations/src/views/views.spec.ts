import Redis from 'ioredis';
import {
  AppHostError,
  GovernedCloseView,
  GovernedGetView,
  GovernedOpenView,
  GovernedPurge,
  GovernedRenewView,
  GovernedRevoke,
  GovernedRunToolBatch,
  type HostProfile,
  type ViewCaller,
} from '@apphost/contracts';
import { McpConnection } from '@apphost/mcp';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import { fixtureServerCommand, STATEFUL_NONCE_RESOURCE, TEST_REDIS_URL } from '@apphost/testing';
import type { GovernedFaultPoint } from '../governed.faults';
import { generationIdOf, principal as batchPrincipal, session, startFakePlane, testProfile, TOOLS, type FakePlane, type FakeState } from '../test/fake-plane';
import { live, placeholder, viewCaller, viewReferences, widgetOf as turnWithWidget } from '../test/view-helpers';
import { ProducingGenerations } from './producing-generations';
import { sessionRevokedKeyOf } from './view-keys';
import { resourcePolicyOf } from './view-opening';

/**
 * Views against the real service, bus and Redis, with recorded fake collaborators (`src/test/fake-plane.ts`) whose
 * catalog-policy reads the document from the real `stateful-nonce` fixture server over stdio. Each widget comes from
 * a real tool batch of this service, so its producing-generation record is the pipeline's own.
 */
const caller = viewCaller;
const NONCE_GENERATION = generationIdOf(true);

describe('governed-operations Views: bootstrap (fake collaborators on a private NATS, real Redis, real fixture server)', () => {
  let plane: FakePlane;
  let state: FakeState;
  let redis: Redis;

  beforeAll(async () => {
    plane = await startFakePlane({ GOVERNED_VIEW_SWEEP_MS: '0' });
    state = plane.state;
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  }, 60_000);

  afterAll(async () => {
    redis?.disconnect();
    await plane?.stop();
  });

  beforeEach(() => plane.reset());

  const client = () => plane.service.client;

  const widgetOf = (tool?: string, args?: Record<string, unknown>) => turnWithWidget(client(), tool, args);

  const open = (at: { eventId: number; functionCallId: string }, who: ViewCaller = caller, theme?: 'dark') =>
    client().request(GovernedOpenView, { caller: who, session, ...at, ...(theme ? { hostContext: { theme } } : {}) }, { timeoutMs: 30_000 });
  const references = () => viewReferences(state);
  /** The View records in Redis under this plane's prefix (a half-made one must never remain). */
  const storedViews = async () => (await redis.keys(`apphost:${plane.prefix}governed-operations:view:*`)).length;

  it('opens a live View: the exact document of the producing generation, its _meta.ui, the tool input, the full sealed result', async () => {
    const at = await widgetOf('nonce-view', { q: 'hello' });
    const view = live(await open(at, caller, 'dark'));

    const direct = await McpConnection.open({
      target: { kind: 'stdio', ...fixtureServerCommand('stateful-nonce'), env: {} },
      connectionClass: 'app-safe',
      advertiseUi: true,
      connectTimeoutMs: 20_000,
    });
    try {
      const read = (await direct.readResource(STATEFUL_NONCE_RESOURCE)) as { contents: { text: string }[] };
      expect(view.document).toMatchObject({ html: read.contents[0].text });
    } finally {
      await direct.close();
    }
    expect(view.viewId).toMatch(/^vw-[0-9a-f]{32}$/);
    expect(view.grant).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(view.viewGeneration).toBe(1);
    expect(view.widget).toEqual({
      widgetId: `${at.eventId}:${at.functionCallId}`,
      eventId: at.eventId,
      functionCallId: at.functionCallId,
      resourceUri: STATEFUL_NONCE_RESOURCE,
      tool: 'nonce-view',
      toolsetId: 'ts',
    });
    // The listing entry's `_meta.ui` (the fixture's item has none), its CSP built without the wildcard.
    expect(view.document.meta).toMatchObject({ resourceUri: STATEFUL_NONCE_RESOURCE, prefersBorder: true });
    expect(view.csp.header).toContain('connect-src https://api.example.com');
    expect(view.csp.rejected).toEqual([{ field: 'connectDomains', value: '*', reason: 'WILDCARD' }]);
    expect(view.allow).toBe('');
    expect(view.toolInput).toEqual({ arguments: { q: 'hello' } });
    expect(view.toolResult).toEqual(TOOLS['nonce-view'].result());
    // Exactly what the profile declares and AppHost implements: the View RPC (no logging, no conversation hooks declared).
    expect(view.hostCapabilities).toEqual({ serverTools: {}, serverResources: {} });
    expect(view.hostContext).toEqual({ theme: 'dark', toolInfo: { id: at.functionCallId, tool: expect.objectContaining({ name: 'nonce-view' }) } });
    expect(Date.parse(view.expiresAt) - Date.now()).toBeGreaterThan(50_000);

    // Bound to exactly the producing generation, one View reference on it, one read.
    expect(state.log.filter((l) => l.startsWith('read-resource:'))).toEqual([`read-resource:${NONCE_GENERATION}`]);
    expect([...(state.leases.get(NONCE_GENERATION)?.values() ?? [])]).toEqual([{ kind: 'view', id: view.viewId }]);
    const snapshot = await client().request(GovernedGetView, { caller, viewId: view.viewId });
    expect(snapshot).toMatchObject({ viewId: view.viewId, mode: 'live', state: 'ACTIVE', reason: null, incarnation: 3, expiresAt: view.expiresAt });
    expect(snapshot.generation).toEqual({ generationId: NONCE_GENERATION, fence: 1, ownerInstanceId: 'fake-owner' });
    // The grant travels only as itself: never in the document, the context, the result or the snapshot.
    expect(JSON.stringify({ document: view.document, hostContext: view.hostContext, toolResult: view.toolResult, snapshot })).not.toContain(view.grant);
  });

  it('asks the registry for a profile once: profiles are immutable by id, so later bootstraps use the cached one', async () => {
    state.profile = { views: { leaseMs: 61_000, maxDocumentBytes: 4096 } }; // a profile id no earlier test used
    const first = await widgetOf();
    const second = await widgetOf();
    const asked = () => state.profileReads.filter((id) => id !== 'p').length;
    const before = asked();
    live(await open(first));
    expect(asked()).toBe(before + 1);
    const view = live(await open(second));
    expect(asked()).toBe(before + 1);
    expect(Date.parse(view.expiresAt) - Date.now()).toBeGreaterThan(60_500); // the cached profile's own lease
  });

  it('records the producing generation before the event is appended (a batch failing at the append leaves it behind)', async () => {
    const faults = plane.service.running.app.get<FaultPoints<GovernedFaultPoint>>(FAULT_POINTS);
    faults.arm('batch.before-append');
    await expect(
      client().request(
        GovernedRunToolBatch,
        { principal: batchPrincipal, session, invocationId: 'inv-fault', calls: [{ functionCallId: 'fc-fault', tool: 'nonce-view', arguments: {} }] },
        { timeoutMs: 20_000 },
      ),
    ).rejects.toMatchObject({ code: 'OUTCOME_UNKNOWN' });
    expect(state.log).not.toContain('append');
    const producers = plane.service.running.app.get(ProducingGenerations);
    expect(await producers.find({ session, incarnation: 3, functionCallId: 'fc-fault', recordId: state.recordIds['fc-fault'] })).toMatchObject({
      generation: {
        generationId: NONCE_GENERATION,
        fence: 1,
        ownerInstanceId: 'fake-owner',
        toolsetId: 'ts',
        bindingGeneration: 1,
        connectionClass: 'app-safe',
      },
      tool: 'nonce-view',
      nativeName: 'nonce-view',
      declaration: { annotations: { readOnlyHint: true } },
    });
  });

  it("the producing record is kept for the profile's idempotency retention (not the 24 h default)", async () => {
    const at = await widgetOf();
    const producers = plane.service.running.app.get(ProducingGenerations);
    expect(await producers.find({ session, incarnation: 3, functionCallId: at.functionCallId, recordId: state.recordIds[at.functionCallId] })).not.toBeNull();
    const keys = await redis.keys(`apphost:${plane.prefix}governed-operations:view-producer:*`);
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(2 * 3600_000 - 60_000);
      expect(ttl).toBeLessThanOrEqual(2 * 3600_000);
    }
  });

  it('a sealed record gone or corrupt: the placeholder (refresh: the tool is read-only), the reservation released, no half-made View', async () => {
    const before = await storedViews();
    const missing = await widgetOf();
    state.sealedMissing.add(state.recordIds[missing.functionCallId]);
    const gone = placeholder(await open(missing));
    expect(gone).toMatchObject({ mode: 'placeholder', reason: 'SEALED_RESULT_MISSING', actions: [{ kind: 'refresh', tool: 'nonce-view', warning: null }] });
    expect(state.log.filter((l) => l === 'retain:view' || l === 'release')).toEqual(['retain:view', 'release']);
    expect(references()).toBe(0);

    const corrupt = await widgetOf();
    state.sealedCorrupt.add(state.recordIds[corrupt.functionCallId]);
    expect(placeholder(await open(corrupt))).toMatchObject({ reason: 'SEALED_RESULT_CORRUPT', actions: [{ kind: 'refresh' }] });
    expect(references()).toBe(0);
    // Only the two grantless placeholder records remain; neither reads as live.
    expect(await storedViews()).toBe(before + 2);
    expect(await client().request(GovernedGetView, { caller, viewId: gone.viewId })).toMatchObject({
      mode: 'placeholder',
      state: 'ACTIVE',
      reason: 'SEALED_RESULT_MISSING',
      generation: null,
      expiresAt: null,
    });
  });

  it.each([
    ['no item of the URI', () => [], 'FAILED_PRECONDITION', 'DOCUMENT_NOT_FOUND'],
    [
      'two App items',
      () => [0, 1].map(() => ({ uri: STATEFUL_NONCE_RESOURCE, mimeType: 'text/html;profile=mcp-app', text: '<p>' })),
      'FAILED_PRECONDITION',
      'DOCUMENT_AMBIGUOUS',
    ],
    ['the wrong MIME type', () => [{ uri: STATEFUL_NONCE_RESOURCE, mimeType: 'text/html', text: '<p>' }], 'FAILED_PRECONDITION', 'DOCUMENT_MIME_MISMATCH'],
    [
      'a document over the profile limit',
      () => [{ uri: STATEFUL_NONCE_RESOURCE, mimeType: 'text/html;profile=mcp-app', text: 'x'.repeat(2048) }],
      'PAYLOAD_TOO_LARGE',
      'DOCUMENT_TOO_LARGE',
    ],
  ])('the read yields %s: a typed error, the reservation released, no View left', async (_label, contents, code, reason) => {
    const at = await widgetOf();
    state.profile = { views: { leaseMs: 60_000, maxDocumentBytes: 1024 } };
    state.documents[STATEFUL_NONCE_RESOURCE] = contents();
    const before = await storedViews();
    await expect(open(at)).rejects.toMatchObject({ code, details: { reason } });
    expect(state.log.filter((l) => l === 'retain:view' || l === 'release')).toEqual(['retain:view', 'release']);
    expect(references()).toBe(0);
    expect(await storedViews()).toBe(before);
  });

  it('a toolset revoked (or bound at another revision) since the widget: the placeholder TOOLSET_REVOKED, nothing reserved', async () => {
    const at = await widgetOf();
    state.toolsetStates['ts'] = 'CLOSED';
    expect(placeholder(await open(at))).toMatchObject({ reason: 'TOOLSET_REVOKED' });
    state.toolsetStates = {};
    state.revisions['ts'] = 'v1.k2.ffff';
    expect(placeholder(await open(at))).toMatchObject({ reason: 'TOOLSET_REVOKED' });
    expect(state.log).not.toContain('retain:view');
  });

  it('the registry owner restarted since the widget: the placeholder GENERATION_GONE', async () => {
    const at = await widgetOf();
    await plane.restartOwner();
    expect(placeholder(await open(at))).toMatchObject({ reason: 'GENERATION_GONE', actions: [{ kind: 'refresh' }] });
    expect(state.log).not.toContain('read-resource:' + NONCE_GENERATION);
  });

  it('a widget whose producing record is gone (lost, expired or never written): the placeholder GENERATION_GONE, the tool named from the sealed record', async () => {
    const at = await widgetOf('nonce-view');
    const producers = await redis.keys(`apphost:${plane.prefix}governed-operations:view-producer:*`);
    expect(producers.length).toBeGreaterThan(0);
    await redis.del(...producers);
    const view = placeholder(await open(at));
    expect(view).toMatchObject({ reason: 'GENERATION_GONE', widget: { tool: 'nonce-view' }, actions: [{ kind: 'rerun' }] });
    expect(state.log).not.toContain('retain:view');
  });

  it('the owner failing the retain (not gone): its error passes through, the lease is given back, no View left', async () => {
    const at = await widgetOf();
    const before = await storedViews();
    state.failures.retain = new AppHostError('UNAVAILABLE', 'the owner is overloaded');
    await expect(open(at)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(state.log.filter((l) => l === 'retain:view' || l === 'release')).toEqual(['retain:view', 'release']);
    expect(await storedViews()).toBe(before);
  });

  it('a session revoked by the cascade once the record is written (its marker): NOT_FOUND, the reference given back, no View left', async () => {
    const at = await widgetOf();
    const before = await storedViews();
    const marker = `apphost:${plane.prefix}governed-operations:${sessionRevokedKeyOf(session, state.incarnation)}`;
    await redis.set(marker, '1', 'PX', 60_000);
    try {
      await expect(open(at)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(state.log.filter((l) => l === 'retain:view' || l === 'release')).toEqual(['retain:view', 'release']);
      expect(references()).toBe(0);
      expect(await storedViews()).toBe(before);
    } finally {
      await redis.del(marker);
    }
  });

  it("a read outside the profile's resource policy: PERMISSION_DENIED passes through, the reservation released", async () => {
    const at = await widgetOf();
    state.profile = { resourcePolicy: { revision: '2', entries: [{ match: 'prefix', uri: 'ui://elsewhere' }] } };
    await expect(open(at)).rejects.toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'RESOURCE_POLICY_DENIED' } });
    expect(references()).toBe(0);
  });

  it('a legacy (profile-less) widget: the placeholder LEGACY_WIDGET, re-run with a warning (nothing is replay-safe without a profile)', async () => {
    const at = await widgetOf('legacy-widget', { q: 1 });
    const view = placeholder(await open(at));
    expect(view).toMatchObject({
      reason: 'LEGACY_WIDGET',
      widget: { resourceUri: 'ui://fake/legacy-widget.html', tool: 'legacy-widget', toolsetId: null },
      actions: [{ kind: 'rerun', tool: 'legacy-widget', label: 'Run tool again', warning: expect.stringMatching(/repeat/) }],
    });
  });

  it('another tenant, user or session, a view token of another session or incarnation, or no view scope: NOT_FOUND, nothing reserved', async () => {
    const at = await widgetOf();
    const { principal } = caller;
    const others: ViewCaller[] = [
      { principal: { ...principal, tenant: 'other' }, userId: 'alice' },
      { principal, userId: 'bob' },
      { principal: { ...principal, restrictedTo: { appName: 'app', sessionId: 's2', incarnation: 3 } }, userId: 'alice' },
      { principal: { ...principal, restrictedTo: { appName: 'other-app', sessionId: 's1', incarnation: 3 } }, userId: 'alice' },
      // Minted before the session was deleted and created again: the same id is another session to it.
      { principal: { ...principal, restrictedTo: { appName: 'app', sessionId: 's1', incarnation: 2 } }, userId: 'alice' },
      { principal: { ...principal, scopes: ['runtime'] }, userId: 'alice' },
    ];
    for (const other of others) await expect(open(at, other)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(client().request(GovernedOpenView, { caller, session: { ...session, sessionId: 's2' }, ...at })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(state.log).not.toContain('retain:view');

    // The right view token opens it; none of the others sees the View afterwards.
    const token: ViewCaller = { principal: { ...principal, restrictedTo: { appName: 'app', sessionId: 's1', incarnation: 3 } }, userId: 'alice' };
    const view = live(await open(at, token));
    for (const other of others) {
      await expect(client().request(GovernedGetView, { caller: other, viewId: view.viewId })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(client().request(GovernedRenewView, { caller: other, viewId: view.viewId, grant: view.grant })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      await expect(client().request(GovernedCloseView, { caller: other, viewId: view.viewId })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    }
    expect((await client().request(GovernedGetView, { caller: token, viewId: view.viewId })).state).toBe('ACTIVE');
  });

  it('a revoked principal cannot open a View', async () => {
    const at = await widgetOf();
    state.revokedPrincipals.add('acme/alice');
    await expect(open(at)).rejects.toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'PRINCIPAL_REVOKED' } });
    expect(state.log).not.toContain('retain:view');
  });

  it('session deletion: revoke ends every View of the incarnation and releases its reference before purge deletes the records', async () => {
    const at = await widgetOf();
    const a = live(await open(at));
    const b = placeholder(await open(await widgetOf('legacy-widget')));
    expect(references()).toBe(1);
    await client().request(GovernedRevoke, { session, incarnation: 3 });
    expect(references()).toBe(0);
    expect(await client().request(GovernedGetView, { caller, viewId: a.viewId })).toMatchObject({ state: 'REVOKED', reason: 'SESSION_DELETED' });
    expect(await client().request(GovernedGetView, { caller, viewId: b.viewId })).toMatchObject({ state: 'REVOKED', reason: 'SESSION_DELETED' });
    await expect(client().request(GovernedRenewView, { caller, viewId: a.viewId, grant: a.grant })).rejects.toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { reason: 'VIEW_REVOKED', revocation: 'SESSION_DELETED' },
    });
    // A bootstrap that passed its session check before the revoke landed opens nothing after it.
    await expect(open(at)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(references()).toBe(0);
    await client().request(GovernedRevoke, { session, incarnation: 3 }); // idempotent
    await client().request(GovernedPurge, { session, incarnation: 3 });
    for (const viewId of [a.viewId, b.viewId]) await expect(client().request(GovernedGetView, { caller, viewId })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const producers = plane.service.running.app.get(ProducingGenerations);
    expect(await producers.find({ session, incarnation: 3, functionCallId: at.functionCallId, recordId: state.recordIds[at.functionCallId] })).toBeNull();
  });
});

describe('resourcePolicyOf', () => {
  const withEntries = (entries: HostProfile['resourcePolicy']['entries']) => ({ ...testProfile(), resourcePolicy: { revision: '1', entries } });

  it('maps exact and prefix entries as they are (a bare-scheme prefix is matched by the policy library)', () => {
    expect(resourcePolicyOf(withEntries([{ match: 'prefix', uri: 'ui://' }]))).toEqual({ exact: [], prefixes: ['ui://'] });
    expect(
      resourcePolicyOf(
        withEntries([
          { match: 'exact', uri: 'ui://a/x.html' },
          { match: 'prefix', uri: 'ui://b' },
        ]),
      ),
    ).toEqual({ exact: ['ui://a/x.html'], prefixes: ['ui://b'] });
  });
});
