import {
  RegistryAcquireGeneration,
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRebindToolset,
  RegistryRevokeToolset,
  RegistryVerifyBindingRevision,
  type ToolsetStatus,
} from '@apphost/contracts';
import { expectAppError } from '@apphost/testing';
import { RegistryStoreAccess } from '../store/store-access';
import { alice, fixtureSpec, profile, session, registrySuite } from '../test/registry-harness';

/*
 * `get-toolset` and `verify-binding-revision` each read the toolset, its current binding (and, for verify, its
 * profile) in one statement. What that must not change: every answer is the registry's state at the moment of the
 * request — after an acquire, a rebind to another profile and a revoke alike — equal to what the separate reads give.
 * Real NATS, PostgreSQL and the capability-gated stdio fixture.
 */
const suite = registrySuite({
  setup: async (registry) => {
    await registry.client.request(RegistryPutProfile, { profileId: 'wide', profile: profile() });
    await registry.client.request(RegistryPutProfile, { profileId: 'narrow', profile: { ...profile(), views: { leaseMs: 60_000 } } });
  },
});

const bus = () => suite.registry.client;
const store = () => suite.registry.running.app.get(RegistryStoreAccess);

/** The statements about `toolsetId` the suite.registry sends while `call` runs (its background work names no toolset). */
async function statementsFor<T>(toolsetId: string, call: () => Promise<T>): Promise<{ answer: T; statements: number }> {
  const spy = jest.spyOn(store().store.database, 'query');
  try {
    const answer = await call();
    return { answer, statements: spy.mock.calls.filter(([, params]) => params?.includes(toolsetId)).length };
  } finally {
    spy.mockRestore();
  }
}

/** `get-toolset`'s binding facts as the separate reads give them: the toolset row, its current binding row, the live count. */
async function separately(toolsetId: string): Promise<Partial<ToolsetStatus>> {
  const toolset = await store().toolsets.get(toolsetId);
  if (!toolset) throw new Error(`toolset ${toolsetId} is not stored`);
  const binding = await store().toolsets.binding(toolsetId, toolset.currentGeneration);
  if (!binding) throw new Error(`toolset ${toolsetId} has no current binding row`);
  const { rows } = await store().store.database.query<{ n: string }>(
    `SELECT count(*) AS n FROM connection_generations WHERE toolset_id = $1 AND state = 'LIVE'`,
    [toolsetId],
  );
  return {
    toolsetId,
    profileId: toolset.profileId,
    state: binding.state,
    bindingGeneration: binding.generation,
    bindingRevision: binding.bindingRevision,
    readiness: binding.readiness,
    liveConnections: Number(rows[0].n),
  };
}

async function getToolset(toolsetId: string): Promise<ToolsetStatus> {
  const { answer, statements } = await statementsFor(toolsetId, () => bus().request(RegistryGetToolset, { toolsetId }));
  expect(statements).toBe(1);
  expect(answer).toMatchObject(await separately(toolsetId));
  return answer;
}

async function verify(toolsetId: string, bindingRevision: string) {
  const { answer, statements } = await statementsFor(toolsetId, () => bus().request(RegistryVerifyBindingRevision, { toolsetId, bindingRevision }));
  expect(statements).toBe(1);
  return answer;
}

describe('toolset reads in one statement, fresh at every request', () => {
  it('get-toolset and verify after an acquire, a rebind to another profile and a revoke answer the state of that moment', async () => {
    const { status: put } = await bus().request(RegistryPutToolset, { toolsetId: 'reads', spec: fixtureSpec('capability-gated', 'wide') });
    const first = String(put.bindingRevision);
    expect(await getToolset('reads')).toMatchObject({
      profileId: 'wide',
      state: 'PROFILE_BOUND',
      bindingGeneration: 1,
      bindingRevision: first,
      liveConnections: 0,
    });
    expect(await verify('reads', first)).toMatchObject({
      valid: true,
      current: true,
      active: true,
      binding: { profileId: 'wide', state: 'PROFILE_BOUND', bindingGeneration: 1, bindingRevision: first },
    });

    await bus().request(RegistryAcquireGeneration, {
      toolsetId: 'reads',
      connectionClass: 'app-safe',
      principal: alice,
      session: session('s1'),
      holder: { kind: 'view', id: 'v1' },
    });
    expect(await getToolset('reads')).toMatchObject({ bindingGeneration: 1, liveConnections: 1 });

    const rebound = await bus().request(RegistryRebindToolset, { toolsetId: 'reads', profileId: 'narrow' });
    const second = String(rebound.bindingRevision);
    expect(second).not.toBe(first);
    expect(await getToolset('reads')).toMatchObject({
      profileId: 'narrow',
      state: 'PROFILE_BOUND',
      bindingGeneration: 2,
      bindingRevision: second,
      liveConnections: 0,
    });
    const current = { profileId: 'narrow', state: 'PROFILE_BOUND', bindingGeneration: 2, bindingRevision: second };
    expect(await verify('reads', first)).toMatchObject({ valid: false, current: false, binding: current });
    expect(await verify('reads', second)).toMatchObject({ valid: true, current: true, binding: current });

    await bus().request(RegistryRevokeToolset, { toolsetId: 'reads' });
    expect(await getToolset('reads')).toMatchObject({ profileId: 'narrow', state: 'CLOSED', bindingGeneration: 2, liveConnections: 0 });
    expect(await verify('reads', second)).toMatchObject({ valid: true, current: false, binding: { ...current, state: 'CLOSED' } });
  }, 60_000);

  it('refusals are the ones of the separate reads: unknown toolset, model-only toolset, malformed revision', async () => {
    expect(await expectAppError(bus().request(RegistryGetToolset, { toolsetId: 'no-such-toolset' }))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await expectAppError(bus().request(RegistryVerifyBindingRevision, { toolsetId: 'no-such-toolset', bindingRevision: 'v1.k.00' }))).toMatchObject({
      code: 'NOT_FOUND',
    });

    await bus().request(RegistryPutToolset, { toolsetId: 'model-only', spec: fixtureSpec('capability-gated', null) });
    expect(await getToolset('model-only')).toMatchObject({ profileId: null, state: 'MODEL_ONLY', bindingRevision: null, readiness: [] });
    expect(await expectAppError(bus().request(RegistryVerifyBindingRevision, { toolsetId: 'model-only', bindingRevision: 'v1.k.00' }))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { reason: 'MODEL_ONLY' },
    });

    await bus().request(RegistryPutToolset, { toolsetId: 'bound', spec: fixtureSpec('capability-gated', 'wide') });
    expect(await expectAppError(bus().request(RegistryVerifyBindingRevision, { toolsetId: 'bound', bindingRevision: 'not-a-revision' }))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { reason: 'DIGEST_VERSION_UNKNOWN' },
    });
  }, 60_000);
});
