import {
  ConnCallTool,
  ConnListTools,
  toolsetSpecSchema,
  RegistryAcquireGeneration,
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRebindToolset,
  RegistryRevokeToolset,
  type GenerationHandle,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import type { RegistryFaultPoint } from '../registry.faults';
import { RegistryStoreAccess } from '../store/store-access';
import { expectAppError, latch } from '@apphost/testing';
import { alice, fixtureSpec, profile, session, registrySuite } from '../test/registry-harness';
import { callStarted } from '../test/call-started';
import { BindingStateWaiter, notifyBindingState } from './binding-state-waiter';

const handles: GenerationHandle[] = [];

const suite = registrySuite({
  setup: async (registry) => {
    await registry.client.request(RegistryPutProfile, { profileId: 'full', profile: profile() });
  },
});

const bus = () => suite.registry.client;
async function acquire(toolsetId: string, connectionClass: 'app-safe' | 'full' = 'app-safe', sessionId = 's1'): Promise<GenerationHandle> {
  const handle = await bus().request(RegistryAcquireGeneration, {
    toolsetId,
    connectionClass,
    principal: alice,
    session: session(sessionId),
    holder: { kind: 'view', id: `v-${handles.length}` },
  });
  handles.push(handle);
  return handle;
}
async function observedUi(handle: GenerationHandle): Promise<boolean> {
  const out = await requestOnGeneration(bus(), ConnCallTool, handle, { callId: `c-${Math.random()}`, name: 'observed-capabilities', arguments: {} });
  if (out.kind !== 'complete') throw new Error('unexpected input round');
  return (out.result['structuredContent'] as { ui: boolean }).ui;
}
async function listedUiMeta(handle: GenerationHandle): Promise<unknown> {
  const { tools } = await requestOnGeneration(bus(), ConnListTools, handle, {});
  return tools.find((t) => t.name === 'show-widget')?._meta;
}

describe('readiness: PROFILE_BOUND advertises, every missing provider means MODEL_ONLY and no advertisement', () => {
  it('a profile whose providers all answer is PROFILE_BOUND and its app-safe connection advertises on the wire', async () => {
    const { status } = await bus().request(RegistryPutToolset, { toolsetId: 'bound', spec: fixtureSpec('capability-gated', 'full') });
    expect(status).toMatchObject({ state: 'PROFILE_BOUND', bindingGeneration: 1, bindingRevision: expect.stringMatching(/^v1\./) });
    expect(status.readiness.every((r) => r.present)).toBe(true);
    const handle = await acquire('bound');
    expect(handle).toMatchObject({ advertisesUi: true, ownerInstanceId: suite.registry.instanceId, bindingRevision: status.bindingRevision });
    expect(await observedUi(handle)).toBe(true);
    expect(await listedUiMeta(handle)).toEqual({ ui: { resourceUri: 'ui://capability-gated/widget.html' } });
  }, 60_000);

  it('a full connection of a PROFILE_BOUND binding never advertises', async () => {
    const handle = await acquire('bound', 'full');
    expect(handle.advertisesUi).toBe(false);
    expect(await observedUi(handle)).toBe(false);
  }, 60_000);

  const kinds = ['principalResolver', 'sessionAuthorizer', 'keyProvider', 'sealedResultStore', 'lifecycleStore', 'exportAuditStore'] as const;
  it.each(kinds)(
    'missing %s → MODEL_ONLY, and the capability-gated server sees no advertisement',
    async (kind) => {
      const base = profile();
      await bus().request(RegistryPutProfile, {
        profileId: `no-${kind}`,
        profile: profile({ [kind]: { ...base.providers[kind], namespace: 'absent-namespace' } }),
      });
      const { status } = await bus().request(RegistryPutToolset, { toolsetId: `no-${kind}`, spec: fixtureSpec('capability-gated', `no-${kind}`) });
      expect(status.state).toBe('MODEL_ONLY');
      expect(status.bindingRevision).toBeNull();
      expect(status.readiness.find((r) => r.provider === kind)).toMatchObject({ present: false, reason: 'NAMESPACE_MISMATCH' });
      expect(status.readiness.filter((r) => !r.present)).toHaveLength(1);
      const handle = await acquire(`no-${kind}`);
      expect(handle.advertisesUi).toBe(false);
      expect(await observedUi(handle)).toBe(false);
      expect(await listedUiMeta(handle)).toBeUndefined();
    },
    60_000,
  );

  it('a toolset without a profile is MODEL_ONLY by construction', async () => {
    const { status } = await bus().request(RegistryPutToolset, { toolsetId: 'no-profile', spec: fixtureSpec('capability-gated', null) });
    expect(status).toMatchObject({ state: 'MODEL_ONLY', readiness: [], bindingRevision: null });
  });
});

describe('profiles and toolset specs are immutable', () => {
  it('same content is idempotent; other content under the same id is CONFLICT', async () => {
    expect(await bus().request(RegistryPutProfile, { profileId: 'full', profile: profile() })).toMatchObject({ created: false });
    const conflict = await expectAppError(
      bus().request(RegistryPutProfile, { profileId: 'full', profile: { ...profile(), renderer: { id: 'other', version: '2' } } }),
    );
    expect(conflict.code).toBe('CONFLICT');
    expect(await bus().request(RegistryPutToolset, { toolsetId: 'bound', spec: fixtureSpec('capability-gated', 'full') })).toMatchObject({ created: false });
    expect((await expectAppError(bus().request(RegistryPutToolset, { toolsetId: 'bound', spec: fixtureSpec('hostile', 'full') }))).code).toBe('CONFLICT');
  });

  it('rejects invalid profiles before any effect', async () => {
    const bad = { ...profile(), extension: { mimeTypes: ['text/html'] } };
    expect((await expectAppError(bus().request(RegistryPutProfile, { profileId: 'bad', profile: bad }))).code).toBe('INVALID_ARGUMENT');
    expect((await expectAppError(bus().request(RegistryGetToolset, { toolsetId: 'nope' }))).code).toBe('NOT_FOUND');
  });
});

describe('binding lifecycle latch', () => {
  const faults = () => suite.registry.running.app.get<FaultPoints<RegistryFaultPoint>>(FAULT_POINTS);
  const store = () => suite.registry.running.app.get(RegistryStoreAccess);

  it('close before materialize: zero constructions, CLOSED; use after CLOSED is a typed error; close is idempotent', async () => {
    await bus().request(RegistryPutToolset, { toolsetId: 'latch-a', spec: fixtureSpec('stateful-nonce', 'full') });
    expect(await store().toolsets.installNextGeneration('latch-a', 1, 'full')).toBe(true); // generation 2, never materialized
    await store().toolsets.beginRevoke('latch-a', 1);
    await store().toolsets.finishRevoke('latch-a', 1);
    const revoked = await bus().request(RegistryRevokeToolset, { toolsetId: 'latch-a' });
    expect(revoked).toMatchObject({ state: 'CLOSED', bindingGeneration: 2 });
    expect(await store().toolsets.binding('latch-a', 2)).toMatchObject({ constructions: 0, closes: 0, state: 'CLOSED' });
    expect(await bus().request(RegistryRevokeToolset, { toolsetId: 'latch-a' })).toMatchObject({ state: 'CLOSED' });
    const used = await expectAppError(acquire('latch-a'));
    expect(used).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'BINDING_CLOSED' } });
  }, 60_000);

  it('materialize racing close: one construction, exactly one close, the binding ends CLOSED', async () => {
    const materialize = latch();
    faults().arm('binding.after-begin-materialize', materialize.action);
    const put = bus().request(RegistryPutToolset, { toolsetId: 'latch-b', spec: fixtureSpec('stateful-nonce', 'full') });
    await materialize.reached;
    const [first, second] = await Promise.all([
      bus().request(RegistryRevokeToolset, { toolsetId: 'latch-b' }),
      bus().request(RegistryRevokeToolset, { toolsetId: 'latch-b' }),
    ]);
    materialize.release();
    const { status } = await put;
    for (const s of [first, second, status]) expect(['REVOKING', 'CLOSED']).toContain(s.state);
    expect(await store().toolsets.binding('latch-b', 1)).toMatchObject({ constructions: 1, closes: 1, state: 'CLOSED' });
  }, 60_000);

  /**
   * Callers that find a binding MATERIALIZING wait for its state change. The re-check is raised to a minute here, so
   * a caller returning within the test proves it was woken by the change itself, not by a timer.
   */
  describe('waiting for a binding being materialized', () => {
    const waiter = () => suite.registry.running.app.get(BindingStateWaiter);
    beforeEach(() => (waiter().recheckMs = 60_000));
    afterEach(() => {
      waiter().recheckMs = 1_000;
      jest.restoreAllMocks();
    });

    /**
     * Watches the reads of `toolsetId#1`: `reached` resolves once one returned MATERIALIZING (a caller is about to
     * wait), `reads()` counts those. A woken waiter reads once before it waits and once after; a poll would read more.
     */
    /** `promise`, or a rejection once `ms` passed: a woken waiter answers long before the 10 s materialize deadline. */
    function within<T>(promise: Promise<T>, ms = 5_000): Promise<T> {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)));
      return Promise.race([promise, late]).finally(() => clearTimeout(timer));
    }

    function watchMaterializing(toolsetId: string): { reached: Promise<void>; reads: () => number } {
      const repo = store().toolsets;
      const read = repo.binding.bind(repo);
      let count = 0;
      const reached = new Promise<void>((resolve) => {
        jest.spyOn(repo, 'binding').mockImplementation(async (id, generation) => {
          const row = await read(id, generation);
          if (id === toolsetId && row?.state === 'MATERIALIZING') {
            count++;
            resolve();
          }
          return row;
        });
      });
      return { reached, reads: () => count };
    }

    it("a caller waiting on this replica's construction is woken when it finishes", async () => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let reached!: () => void;
      const atMaterialize = new Promise<void>((r) => (reached = r));
      faults().arm('binding.after-begin-materialize', async () => {
        reached();
        await held;
      });
      const put = bus().request(RegistryPutToolset, { toolsetId: 'wait-local', spec: fixtureSpec('stateful-nonce', 'full') });
      await atMaterialize;
      const watched = watchMaterializing('wait-local');
      const acquired = acquire('wait-local');
      await watched.reached;
      release();
      await expect(put).resolves.toMatchObject({ status: { state: 'PROFILE_BOUND' } });
      await expect(within(acquired)).resolves.toMatchObject({ bindingGeneration: 1 });
      expect(watched.reads()).toBe(1);
    }, 30_000);

    it("a caller waiting on another replica's construction is woken by its notification", async () => {
      // Another replica won the construction: the row is MATERIALIZING and nothing in this process will finish it.
      const REMOTE_TOKEN = '00000000-0000-4000-8000-000000000001';
      const spec = toolsetSpecSchema.parse(fixtureSpec('capability-gated', null));
      await store().toolsets.put('wait-remote', spec, 'digest-wait-remote');
      expect(await store().toolsets.beginMaterialize('wait-remote', 1, REMOTE_TOKEN, 60_000)).toBe(true);
      const watched = watchMaterializing('wait-remote');
      const acquired = acquire('wait-remote');
      await watched.reached;
      // The other replica finishes and notifies over its own connection.
      const other = store().store.database.dedicatedConnection('notify');
      await other.connect();
      try {
        expect(await store().toolsets.finishMaterialize('wait-remote', 1, REMOTE_TOKEN, 'MODEL_ONLY', [], null)).toBe(true);
        await notifyBindingState(other, store().store.schema, 'wait-remote', 1);
      } finally {
        await other.end();
      }
      await expect(within(acquired)).resolves.toMatchObject({ bindingGeneration: 1, advertisesUi: false });
      expect(watched.reads()).toBe(1);
    }, 30_000);
  });
});

describe('revocation and rebind on live pooled connections', () => {
  it('revoke closes the advertising connection (holders get CONNECTION_GENERATION_GONE); a rebind without a provider does not advertise', async () => {
    await bus().request(RegistryPutToolset, { toolsetId: 'pooled', spec: fixtureSpec('capability-gated', 'full') });
    const before = await acquire('pooled');
    expect(await observedUi(before)).toBe(true);
    const revoked = await bus().request(RegistryRevokeToolset, { toolsetId: 'pooled' });
    expect(revoked).toMatchObject({ state: 'CLOSED', liveConnections: 0 });
    const gone = await expectAppError(observedUi(before));
    expect(gone).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'CONNECTION_GENERATION_GONE' } });

    // The sealed store (and the rest) disappear while the toolset is rebound.
    await suite.withoutProviders(async () => {
      const rebound = await bus().request(RegistryRebindToolset, { toolsetId: 'pooled' });
      expect(rebound).toMatchObject({ state: 'MODEL_ONLY', bindingGeneration: 2 });
      const after = await acquire('pooled');
      expect(after).toMatchObject({ advertisesUi: false, bindingGeneration: 2 });
      expect(after.generationId).not.toBe(before.generationId);
      expect(await observedUi(after)).toBe(false);
    });
  }, 60_000);

  it('rebind racing in-flight calls and listings: the old generation fails typed, the new one serves, old never returns', async () => {
    await bus().request(RegistryPutToolset, { toolsetId: 'racing', spec: fixtureSpec('stateful-nonce', 'full') });
    const old = await acquire('racing');
    const started = callStarted('slow');
    const slow = requestOnGeneration(bus(), ConnCallTool, old, { callId: 'slow-1', name: 'slow', arguments: { ms: 3000, steps: 3 } });
    const listing = requestOnGeneration(bus(), ConnListTools, old, {});
    await started;
    const rebound = await bus().request(RegistryRebindToolset, { toolsetId: 'racing' });
    expect(rebound).toMatchObject({ state: 'PROFILE_BOUND', bindingGeneration: 2 });
    const slowError = await expectAppError(slow);
    expect(slowError.details?.['reason']).toBe('CONNECTION_GENERATION_GONE');
    const listed = await listing.then(
      (l) => l.tools.length,
      (e: unknown) => e,
    );
    const fresh = await acquire('racing');
    expect(fresh.bindingGeneration).toBe(2);
    // The listing either finished before the swap (the server's whole catalog, as the new generation lists it) or
    // failed typed; never a partial catalog.
    const whole = (await requestOnGeneration(bus(), ConnListTools, fresh, {})).tools.length;
    if (typeof listed === 'number') expect(listed).toBe(whole);
    else expect(listed).toMatchObject({ details: { reason: 'CONNECTION_GENERATION_GONE' } });
    expect(fresh.generationId).not.toBe(old.generationId);
    await expect(requestOnGeneration(bus(), ConnCallTool, fresh, { callId: 'ok', name: 'whoami', arguments: {} })).resolves.toMatchObject({ kind: 'complete' });
    expect((await expectAppError(requestOnGeneration(bus(), ConnListTools, old, {}))).details?.['reason']).toBe('CONNECTION_GENERATION_GONE');
  }, 60_000);
});
