import {
  ConnCallTool,
  RegistryAcquireGeneration,
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRebindToolset,
  RegistryVerifyBindingRevision,
  type GenerationHandle,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { expectAppError } from '@apphost/testing';
import { RegistryStoreAccess } from '../store/store-access';
import { alice, fixtureSpec, profile, session, registrySuite } from '../test/registry-harness';

/*
 * `rebind-toolset { profileId }`: a toolset moves to another stored profile (a narrower policy) in a new binding
 * generation. Real NATS, PostgreSQL and the capability-gated stdio fixture, which reports what the client advertised.
 */
/** The same host, narrowed: fewer View RPCs, shorter View leases, one exact resource instead of every `ui://`. */
const narrow = () => ({
  ...profile(),
  resourcePolicy: { revision: '2', entries: [{ match: 'exact' as const, uri: 'ui://capability-gated/widget.html' }] },
  views: { leaseMs: 60_000 },
  rpc: { perViewPerMinute: 60 },
});

const suite = registrySuite({
  setup: async (registry) => {
    await registry.client.request(RegistryPutProfile, { profileId: 'wide', profile: profile() });
    await registry.client.request(RegistryPutProfile, { profileId: 'narrow', profile: narrow() });
  },
});

const bus = () => suite.registry.client;
const acquire = (toolsetId: string, connectionClass: 'app-safe' | 'full'): Promise<GenerationHandle> =>
  bus().request(RegistryAcquireGeneration, { toolsetId, connectionClass, principal: alice, session: session('s1'), holder: { kind: 'view', id: 'v1' } });
async function observedUi(handle: GenerationHandle): Promise<boolean> {
  const out = await requestOnGeneration(bus(), ConnCallTool, handle, { callId: `c-${Math.random()}`, name: 'observed-capabilities', arguments: {} });
  if (out.kind !== 'complete') throw new Error('unexpected input round');
  return (out.result['structuredContent'] as { ui: boolean }).ui;
}

describe('rebind to another profile', () => {
  it('an unknown profile is NOT_FOUND before any effect: same generation, same revision, connections untouched', async () => {
    const { status } = await bus().request(RegistryPutToolset, { toolsetId: 'kept', spec: fixtureSpec('capability-gated', 'wide') });
    const handle = await acquire('kept', 'app-safe');
    const refused = await expectAppError(bus().request(RegistryRebindToolset, { toolsetId: 'kept', profileId: 'no-such-profile' }));
    expect(refused.code).toBe('NOT_FOUND');
    expect(await bus().request(RegistryGetToolset, { toolsetId: 'kept' })).toMatchObject({
      profileId: 'wide',
      bindingGeneration: 1,
      state: 'PROFILE_BOUND',
      bindingRevision: status.bindingRevision,
    });
    expect(await observedUi(handle)).toBe(true);
    expect(await suite.registry.running.app.get(RegistryStoreAccess).toolsets.binding('kept', 2)).toBeUndefined();
  }, 60_000);

  it('to a narrower profile: a new binding generation and revision, the old advertising connections closed', async () => {
    const { status: before } = await bus().request(RegistryPutToolset, { toolsetId: 'narrowed', spec: fixtureSpec('capability-gated', 'wide') });
    const advertising = await acquire('narrowed', 'app-safe');
    const modelPath = await acquire('narrowed', 'full');
    expect(await observedUi(advertising)).toBe(true);
    expect(before.bindingRevision).toMatch(/^v1\./);

    const after = await bus().request(RegistryRebindToolset, { toolsetId: 'narrowed', profileId: 'narrow' });
    expect(after).toMatchObject({ profileId: 'narrow', state: 'PROFILE_BOUND', bindingGeneration: 2, bindingRevision: expect.stringMatching(/^v1\./) });
    expect(after.bindingRevision).not.toBe(before.bindingRevision);
    expect(await bus().request(RegistryGetToolset, { toolsetId: 'narrowed' })).toMatchObject({ profileId: 'narrow', bindingGeneration: 2 });

    // The old generation's advertising connection is gone at once; its non-advertising one drains (closed at its last release).
    expect(await expectAppError(observedUi(advertising))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { reason: 'CONNECTION_GENERATION_GONE', why: 'BINDING_REVOKED' },
    });
    expect(await observedUi(modelPath)).toBe(false);

    // Revisions signed under the wide profile no longer verify; the new one is current.
    expect(await bus().request(RegistryVerifyBindingRevision, { toolsetId: 'narrowed', bindingRevision: String(before.bindingRevision) })).toMatchObject({
      valid: false,
      current: false,
    });
    expect(await bus().request(RegistryVerifyBindingRevision, { toolsetId: 'narrowed', bindingRevision: String(after.bindingRevision) })).toMatchObject({
      valid: true,
      current: true,
    });

    const fresh = await acquire('narrowed', 'app-safe');
    expect(fresh).toMatchObject({ bindingGeneration: 2, advertisesUi: true, bindingRevision: after.bindingRevision });
    expect(fresh.generationId).not.toBe(advertising.generationId);
    expect(await observedUi(fresh)).toBe(true);

    // Each binding generation keeps the profile it was bound under.
    const toolsets = suite.registry.running.app.get(RegistryStoreAccess).toolsets;
    expect(await toolsets.binding('narrowed', 1)).toMatchObject({ profileId: 'wide', state: 'CLOSED' });
    expect(await toolsets.binding('narrowed', 2)).toMatchObject({ profileId: 'narrow', state: 'PROFILE_BOUND' });
  }, 60_000);

  it('a rebind without a profile keeps the current one (and, the fingerprint being the same, the same revision)', async () => {
    const again = await bus().request(RegistryRebindToolset, { toolsetId: 'narrowed' });
    const { bindingRevision } = await bus().request(RegistryGetToolset, { toolsetId: 'narrowed' });
    expect(again).toMatchObject({ profileId: 'narrow', bindingGeneration: 3, state: 'PROFILE_BOUND', bindingRevision });
    const gen2 = await suite.registry.running.app.get(RegistryStoreAccess).toolsets.binding('narrowed', 2);
    expect(again.bindingRevision).toBe(gen2?.bindingRevision);
  }, 60_000);
});
