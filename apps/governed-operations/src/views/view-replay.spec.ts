import { GovernedCloseView, GovernedReplayView, isWidgetDescriptor, type ViewCaller } from '@apphost/contracts';
import { startFakePlane, type FakePlane, type FakeState } from '../test/fake-plane';
import { live, openView, placeholder, viewCaller as caller, widgetOf } from '../test/view-helpers';
import { replayCallIdOf } from './view.service';

/**
 * A placeholder's cold actions: `refresh` (replay-safe calls only) and `rerun` run the widget's tool again as a new
 * invocation through the normal tool-batch path (admission, confirmation policy, sealing, one appended event), then
 * open a View of the new widget.
 */
describe('governed-operations Views: refresh and re-run of a placeholder (fake collaborators, real Redis)', () => {
  let plane: FakePlane;
  let state: FakeState;

  beforeAll(async () => {
    plane = await startFakePlane({ GOVERNED_VIEW_SWEEP_MS: '0' });
    state = plane.state;
  }, 60_000);

  afterAll(async () => {
    await plane?.stop();
  });

  beforeEach(() => plane.reset());

  const client = () => plane.service.client;
  const replay = (viewId: string, action: 'refresh' | 'rerun', invocationId: string, who: ViewCaller = caller) =>
    client().request(GovernedReplayView, { caller: who, viewId, action, invocationId, hostContext: { theme: 'light' } }, { timeoutMs: 30_000 });
  const calls = (tool: string) => state.log.filter((l) => l === `call:${tool}`).length;

  it('refresh of a replay-safe placeholder (the sealed record corrupt): a new invocation with the same arguments, a live View of its widget', async () => {
    const at = await widgetOf(client(), 'nonce-view', { q: 'again' });
    state.sealedCorrupt.add(state.recordIds[at.functionCallId]);
    const cold = placeholder(await openView(client(), at));
    expect(cold.actions).toEqual([{ kind: 'refresh', tool: 'nonce-view', label: 'Refresh', warning: null }]);

    const before = calls('nonce-view');
    const replayed = await replay(cold.viewId, 'refresh', 'inv-refresh-1');
    const functionCallId = replayCallIdOf(cold.viewId, 'inv-refresh-1');
    expect(calls('nonce-view')).toBe(before + 1);
    expect(state.callArgs.at(-1)).toEqual({ q: 'again' });
    expect(replayed.event.functionResponses.map((r) => r.functionCallId)).toEqual([functionCallId]);
    const [descriptor] = replayed.event.widgets;
    expect(isWidgetDescriptor(descriptor) && descriptor.correlation).toEqual({ invocationId: 'inv-refresh-1', functionCallId });
    const view = live(expectView(replayed.view));
    expect(view.widget).toMatchObject({ eventId: replayed.event.eventId, functionCallId, tool: 'nonce-view' });
    expect(view.toolInput).toEqual({ arguments: { q: 'again' } });
    expect(view.hostContext).toMatchObject({ theme: 'light' });

    // The same invocation again is the same batch: its event comes back, nothing runs a second time.
    const again = await replay(cold.viewId, 'refresh', 'inv-refresh-1');
    expect(again.event.eventId).toBe(replayed.event.eventId);
    expect(calls('nonce-view')).toBe(before + 1);
  });

  it('refresh of a placeholder whose generation is gone takes the arguments from the sealed refresh record', async () => {
    const at = await widgetOf(client(), 'nonce-view', { q: 'sealed' });
    await plane.restartOwner();
    const cold = placeholder(await openView(client(), at));
    expect(cold.reason).toBe('GENERATION_GONE');
    const replayed = await replay(cold.viewId, 'refresh', 'inv-refresh-2');
    expect(state.callArgs.at(-1)).toEqual({ q: 'sealed' });
    expect(live(expectView(replayed.view)).toolInput).toEqual({ arguments: { q: 'sealed' } });
  });

  it('a legacy placeholder: refresh is REPLAY_NOT_SAFE, re-run runs the tool again with its arguments (again a placeholder)', async () => {
    const at = await widgetOf(client(), 'legacy-widget', { q: 7 });
    const cold = placeholder(await openView(client(), at));
    await expect(replay(cold.viewId, 'refresh', 'inv-legacy')).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'REPLAY_NOT_SAFE' } });
    const before = calls('legacy-widget');
    const rerun = await replay(cold.viewId, 'rerun', 'inv-legacy');
    expect(calls('legacy-widget')).toBe(before + 1);
    expect(state.callArgs.at(-1)).toEqual({ q: 7 });
    expect(placeholder(expectView(rerun.view))).toMatchObject({
      reason: 'LEGACY_WIDGET',
      widget: { functionCallId: replayCallIdOf(cold.viewId, 'inv-legacy') },
    });
  });

  it('a call the confirmation policy holds: the event carries the confirmation, no View', async () => {
    const at = await widgetOf(client(), 'nonce-view');
    state.sealedMissing.add(state.recordIds[at.functionCallId]);
    const cold = placeholder(await openView(client(), at));
    state.requireConfirmation['ts'] = ['nonce-view'];
    const before = calls('nonce-view');
    const held = await replay(cold.viewId, 'rerun', 'inv-held');
    expect(calls('nonce-view')).toBe(before);
    expect(held.event.confirmations).toHaveLength(1);
    expect(held.view).toBeNull();
  });

  it('a live View cannot be replayed (VIEW_NOT_PLACEHOLDER); a foreign caller reads NOT_FOUND; a closed placeholder is VIEW_REVOKED; a revoked principal is refused', async () => {
    const view = live(await openView(client(), await widgetOf(client())));
    await expect(replay(view.viewId, 'rerun', 'inv-live')).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'VIEW_NOT_PLACEHOLDER' } });
    const cold = placeholder(await openView(client(), await widgetOf(client(), 'legacy-widget')));
    const closed = placeholder(await openView(client(), await widgetOf(client(), 'legacy-widget')));
    await client().request(GovernedCloseView, { caller, viewId: closed.viewId });
    const classified = state.log.filter((l) => l === 'classify').length;
    await expect(replay(cold.viewId, 'rerun', 'inv-foreign', { ...caller, userId: 'bob' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(replay(closed.viewId, 'rerun', 'inv-closed')).rejects.toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { reason: 'VIEW_REVOKED', revocation: 'TORN_DOWN' },
    });
    state.revokedPrincipals.add('acme/alice');
    await expect(replay(cold.viewId, 'rerun', 'inv-revoked')).rejects.toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'PRINCIPAL_REVOKED' } });
    // None of them reached the tool-batch path.
    expect(state.log.filter((l) => l === 'classify').length).toBe(classified);
  });
});

function expectView<T>(view: T | null): T {
  if (view === null) throw new Error('expected the replay to open a View');
  return view;
}
