import { AppHostError, ConnGenerationState, GovernedCloseView, GovernedGetView, GovernedRenewView, type ViewCaller } from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { bootService, captureServiceLogs, sleep, type ServiceUnderTest } from '@apphost/testing';
import { governedOperationsService } from '../service';
import { startFakePlane, type FakePlane, type FakeState } from '../test/fake-plane';
import { live, openView, viewCaller as caller, viewReferences, widgetOf } from '../test/view-helpers';
import { ViewSweep } from './view-sweep';

/**
 * A live View after its bootstrap: renew with the grant, two-phase close, lazy revocation on `get-view`, the sweep,
 * two replicas sharing View state, and the grant nowhere but in the bootstrap answer (every log line captured).
 */
describe('governed-operations Views: lease, teardown, revocation (fake collaborators, real Redis)', () => {
  let plane: FakePlane;
  let state: FakeState;
  let logs: ReturnType<typeof captureServiceLogs>;
  /** Every grant this file was handed: the last test looks for them in every log line. */
  const grants: string[] = [];

  beforeAll(async () => {
    logs = captureServiceLogs('debug');
    plane = await startFakePlane({ GOVERNED_VIEW_SWEEP_MS: '0' });
    state = plane.state;
  }, 60_000);

  afterAll(async () => {
    logs?.stop();
    await plane?.stop();
  });

  beforeEach(() => plane.reset());

  const client = () => plane.service.client;
  async function opened() {
    const view = live(await openView(client(), await widgetOf(client())));
    grants.push(view.grant);
    return view;
  }
  const get = (viewId: string) => client().request(GovernedGetView, { caller, viewId });
  const renew = (viewId: string, grant: string, who: ViewCaller = caller) => client().request(GovernedRenewView, { caller: who, viewId, grant });
  const close = (viewId: string) => client().request(GovernedCloseView, { caller, viewId });
  const generationOf = async (viewId: string) => {
    const { generation } = await get(viewId);
    if (!generation) throw new Error('a live View has a generation');
    return generation;
  };

  it('two Views of one widget share its generation: one closed (twice), the other still renews; the last close makes it evictable', async () => {
    const at = await widgetOf(client());
    const a = live(await openView(client(), at));
    const b = live(await openView(client(), at));
    grants.push(a.grant, b.grant);
    expect(a.viewId).not.toBe(b.viewId);
    const generation = await generationOf(a.viewId);
    expect(await generationOf(b.viewId)).toEqual(generation);
    const generationState = () => requestOnGeneration(client(), ConnGenerationState, generation, {});
    expect(await generationState()).toMatchObject({ references: 2, byHolderKind: { view: 2 }, evictable: false });

    expect(await close(a.viewId)).toEqual({ closed: true });
    expect(await close(a.viewId)).toEqual({ closed: false });
    expect(await get(a.viewId)).toMatchObject({ state: 'CLOSED', reason: 'TORN_DOWN' });
    expect(await generationState()).toMatchObject({ references: 1, evictable: false });

    const renewed = await renew(b.viewId, b.grant);
    expect(renewed.viewId).toBe(b.viewId);
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThanOrEqual(Date.parse(b.expiresAt));
    expect((await get(b.viewId)).expiresAt).toBe(renewed.expiresAt);

    expect(await close(b.viewId)).toEqual({ closed: true });
    expect(await generationState()).toMatchObject({ references: 0, evictable: true });
  });

  it('renew needs the View own grant and its opener: anything else is VIEW_GRANT_INVALID; a closed View answers VIEW_REVOKED (TORN_DOWN)', async () => {
    const a = await opened();
    const b = await opened();
    const invalid = { code: 'PERMISSION_DENIED', details: { reason: 'VIEW_GRANT_INVALID' } };
    await expect(renew(a.viewId, b.grant)).rejects.toMatchObject(invalid);
    await expect(renew(a.viewId, 'A'.repeat(43))).rejects.toMatchObject(invalid);
    // The same user through another principal (a service credential acting for her) did not open it.
    await expect(renew(a.viewId, a.grant, { principal: { tenant: 'acme', subject: 'runtime-svc', scopes: ['view'] }, userId: 'alice' })).rejects.toMatchObject(
      invalid,
    );
    await close(a.viewId);
    await expect(renew(a.viewId, a.grant)).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'VIEW_REVOKED', revocation: 'TORN_DOWN' } });
    expect((await renew(b.viewId, b.grant)).viewId).toBe(b.viewId);
  });

  it.each([
    ['the toolset rebound (a new binding generation)', (s: FakeState) => void (s.bindingGenerations['ts'] = 2), 'TOOLSET_REBOUND'],
    ['the toolset bound at another revision', (s: FakeState) => void (s.revisions['ts'] = 'v1.k2.ffff'), 'TOOLSET_REBOUND'],
    ['the toolset revoked', (s: FakeState) => void (s.toolsetStates['ts'] = 'REVOKING'), 'TOOLSET_REVOKED'],
    ['the principal revoked', (s: FakeState) => void s.revokedPrincipals.add('acme/alice'), 'PRINCIPAL_REVOKED'],
  ])('get-view finds %s: REVOKED with that reason, its reference released, renew refused', async (_label, change, reason) => {
    const view = await opened();
    expect(viewReferences(state)).toBe(1);
    change(state);
    expect(await get(view.viewId)).toMatchObject({ state: 'REVOKED', reason });
    expect(viewReferences(state)).toBe(0);
    const refused = await renew(view.viewId, view.grant).catch((e: unknown) => e as AppHostError);
    expect(refused).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'VIEW_REVOKED', revocation: reason } });
  });

  it('the registry owner restarted: get-view says GENERATION_GONE', async () => {
    const view = await opened();
    await plane.restartOwner();
    expect(await get(view.viewId)).toMatchObject({ state: 'REVOKED', reason: 'GENERATION_GONE' });
    await expect(renew(view.viewId, view.grant)).rejects.toMatchObject({ details: { reason: 'VIEW_REVOKED', revocation: 'GENERATION_GONE' } });
  });

  it('renew of a revoked principal: PERMISSION_DENIED PRINCIPAL_REVOKED, and the View is revoked with its reference released', async () => {
    const view = await opened();
    state.revokedPrincipals.add('acme/alice');
    await expect(renew(view.viewId, view.grant)).rejects.toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'PRINCIPAL_REVOKED' } });
    expect(viewReferences(state)).toBe(0);
    state.revokedPrincipals.clear();
    expect(await get(view.viewId)).toMatchObject({ state: 'REVOKED', reason: 'PRINCIPAL_REVOKED' });
  });

  it('a lease that runs out: renew and get-view say LEASE_EXPIRED; the sweep revokes one nobody touches', async () => {
    state.profile = { views: { leaseMs: 300 } };
    const touched = await opened();
    const untouched = await opened();
    expect(viewReferences(state)).toBe(2);
    await sleep(400);
    await expect(renew(touched.viewId, touched.grant)).rejects.toMatchObject({ details: { reason: 'VIEW_REVOKED', revocation: 'LEASE_EXPIRED' } });
    expect(viewReferences(state)).toBe(1);
    expect(await plane.service.running.app.get(ViewSweep).sweep()).toBeGreaterThanOrEqual(1);
    expect(viewReferences(state)).toBe(0);
    expect(await get(untouched.viewId)).toMatchObject({ state: 'REVOKED', reason: 'LEASE_EXPIRED' });
  });

  it('a close whose release fails: CLOSED at once (the grant is dead), the release retried by the next get-view and by the sweep', async () => {
    const a = await opened();
    const b = await opened();
    state.failures.release = new AppHostError('UNAVAILABLE', 'the owner does not answer');
    expect(await close(a.viewId)).toEqual({ closed: true });
    expect(await close(b.viewId)).toEqual({ closed: true });
    await expect(renew(a.viewId, a.grant)).rejects.toMatchObject({ details: { reason: 'VIEW_REVOKED', revocation: 'TORN_DOWN' } });
    expect(viewReferences(state)).toBe(2);
    state.failures.release = undefined;
    expect(await get(a.viewId)).toMatchObject({ state: 'CLOSED' });
    expect(viewReferences(state)).toBe(1);
    expect(await plane.service.running.app.get(ViewSweep).sweep()).toBe(1);
    expect(viewReferences(state)).toBe(0);
    expect(await plane.service.running.app.get(ViewSweep).sweep()).toBe(0);
  });

  it('a bootstrap that could not undo its reservation: its OPENING record is invisible, and the sweep releases it once abandoned', async () => {
    const at = await widgetOf(client());
    state.documents['ui://stateful-nonce/app.html'] = [];
    state.failures.release = new AppHostError('UNAVAILABLE', 'the owner does not answer');
    await expect(openView(client(), at)).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'DOCUMENT_NOT_FOUND' } });
    expect(viewReferences(state)).toBe(1);
    state.failures.release = undefined;
    const sweep = plane.service.running.app.get(ViewSweep);
    expect(await sweep.sweep()).toBe(0); // not abandoned yet: the bootstrap may still be running
    expect(viewReferences(state)).toBe(1);
    expect(await sweep.sweep(Date.now() + 6 * 60_000)).toBeGreaterThanOrEqual(1); // earlier tests' Views have run out by then too
    expect(viewReferences(state)).toBe(0);
  });

  describe('two replicas', () => {
    let second: ServiceUnderTest;

    beforeAll(async () => {
      second = await bootService(governedOperationsService, plane.prefix, { NATS_URL: plane.natsUrl, GOVERNED_VIEW_SWEEP_MS: '0' });
    }, 60_000);

    afterAll(async () => {
      await second?.stop();
    });

    it('a View opened on one replica is renewed, read and closed on the other', async () => {
      const view = await opened();
      await plane.stopService(); // only the second replica answers from here on
      const renewed = await second.client.request(GovernedRenewView, { caller, viewId: view.viewId, grant: view.grant });
      expect(renewed.viewId).toBe(view.viewId);
      expect(await second.client.request(GovernedGetView, { caller, viewId: view.viewId })).toMatchObject({ state: 'ACTIVE', expiresAt: renewed.expiresAt });
      expect(await second.client.request(GovernedCloseView, { caller, viewId: view.viewId })).toEqual({ closed: true });
      expect(viewReferences(state)).toBe(0);
    });
  });

  describe('finally', () => {
    it('the grant appears in no log line of either replica', async () => {
      expect(grants.length).toBeGreaterThan(10);
      expect(logs.lines.length).toBeGreaterThan(0);
      expect(logs.lines.some((l) => l['msg'] === 'view opened')).toBe(true);
      const logged = JSON.stringify(logs.lines);
      for (const grant of grants) expect(logged).not.toContain(grant);
    });
  });
});
