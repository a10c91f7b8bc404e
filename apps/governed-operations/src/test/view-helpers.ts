import { GovernedOpenView, GovernedRunToolBatch, type LiveViewAnswer, type OpenViewAnswer, type PlaceholderView, type ViewCaller } from '@apphost/contracts';
import type { BusClient } from '@apphost/bus';
import { principal, session, type FakeState } from './fake-plane';

/** The session's user as a View caller (what the gateway resolves from the user's or a view token's principal). */
export const viewCaller: ViewCaller = { principal: { tenant: 'acme', subject: 'alice', scopes: ['view'] }, userId: 'alice' };

let turns = 0;

/** One model turn producing one widget of `tool`; answers where it is. */
export async function widgetOf(
  client: BusClient,
  tool = 'nonce-view',
  args: Record<string, unknown> = { q: 'x' },
): Promise<{ eventId: number; functionCallId: string }> {
  const turn = ++turns;
  const functionCallId = `fc-${turn}`;
  const res = await client.request(
    GovernedRunToolBatch,
    { principal, session, invocationId: `inv-${turn}`, calls: [{ functionCallId, tool, arguments: args }] },
    { timeoutMs: 20_000 },
  );
  if (res.widgets.length !== 1) throw new Error(`the turn produced ${res.widgets.length} widgets`);
  return { eventId: res.eventId, functionCallId };
}

export function openView(client: BusClient, at: { eventId: number; functionCallId: string }, caller: ViewCaller = viewCaller): Promise<OpenViewAnswer> {
  return client.request(GovernedOpenView, { caller, session, ...at }, { timeoutMs: 30_000 });
}

export function live(v: OpenViewAnswer): LiveViewAnswer {
  if (v.mode !== 'live') throw new Error(`expected a live view, got the placeholder ${v.reason}`);
  return v;
}

export function placeholder(v: OpenViewAnswer): PlaceholderView {
  if (v.mode !== 'placeholder') throw new Error('expected a placeholder');
  return v;
}

/** The View references the fake owner holds now, on any generation (`reset()` forgets earlier tests'). */
export function viewReferences(state: FakeState): number {
  return [...state.leases.values()].reduce((n, leases) => n + [...leases.values()].filter((h) => h.kind === 'view').length, 0);
}
