import {
  LifecycleAppendEvents,
  LifecycleCreateSession,
  LifecycleDeleteSession,
  LifecycleGetEvent,
  LifecycleGetSession,
  LifecycleGetSessionStanding,
  LifecycleGetWidgetStanding,
  LifecycleSetPrincipalRevocation,
  type LedgerEventInput,
  type SessionKey,
} from '@apphost/contracts';
import { describeOnPostgres } from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';

jest.setTimeout(30_000);

const RECORD_A = 'rec_AAAAAAAAAAAAAAAAAAAAAA';
const RECORD_B = 'rec_BBBBBBBBBBBBBBBBBBBBBB';
const URI = 'ui://dash/view.html';

const descriptor = (functionCallId: string, recordId: string | null) => ({
  schemaVersion: 1 as const,
  resourceUri: URI,
  correlation: { invocationId: 'inv-1', functionCallId },
  serverId: 'srv',
  toolsetId: 'ts',
  bindingRevision: 'k1:abc',
  sealedResultRef: recordId ? { recordId, schemaVersion: 1 } : null,
});
const legacy = (tool: string, toolArgs: Record<string, unknown>, resourceUri = URI) => ({ resourceUri, tool, toolArgs });
const response = (id: string, name: string) => ({ id, name, response: { content: [{ type: 'text', text: `${name} ok` }] } });

describeOnPostgres('lifecycle-store get-event', (target) => {
  // Nested, so these hooks run inside the target's own (its server outlives the cleanup).
  describe('through the bus', () => {
    const h = new LifecycleHarness(target);

    beforeAll(() => h.start(), 60_000);
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    async function active(key = h.key()): Promise<SessionKey> {
      await h.client.request(LifecycleCreateSession, { session: key, creationOperationId: `op-${key.sessionId}-${Date.now()}` });
      return key;
    }
    const append = (session: SessionKey, event: LedgerEventInput, incarnation = 1) =>
      h.client.request(LifecycleAppendEvents, { session, incarnation, provenance: { path: 'user-turn' }, events: [event] });
    const get = (session: SessionKey, functionCallId: string, over: { incarnation?: number; eventId?: number } = {}) =>
      h.client.request(LifecycleGetEvent, { session, incarnation: over.incarnation ?? 1, eventId: over.eventId ?? 1, functionCallId });

    it('a descriptor with a sealed reference: its binding, its reference, the descriptor, and the recorded call when the event has it', async () => {
      const key = await active();
      await append(key, {
        author: 'agent',
        functionCalls: [{ id: 'c1', name: 'show_chart', args: { city: 'Oslo' } }],
        functionResponses: [response('c1', 'show_chart')],
        widgets: [descriptor('c1', RECORD_A)],
      });
      await expect(get(key, 'c1')).resolves.toEqual({
        incarnation: 1,
        eventId: 1,
        functionCallId: 'c1',
        toolsetId: 'ts',
        bindingRevision: 'k1:abc',
        sealedResultRef: { recordId: RECORD_A, schemaVersion: 1 },
        widget: descriptor('c1', RECORD_A),
        call: { name: 'show_chart', args: { city: 'Oslo' } },
      });
    });

    it('a descriptor without a sealed reference is found too; an event that records no function call for it answers call null', async () => {
      const key = await active();
      await append(key, { author: 'apphost', functionResponses: [response('c1', 'show_chart')], widgets: [descriptor('c1', null)] });
      await expect(get(key, 'c1')).resolves.toEqual({
        incarnation: 1,
        eventId: 1,
        functionCallId: 'c1',
        toolsetId: 'ts',
        bindingRevision: 'k1:abc',
        sealedResultRef: null,
        widget: descriptor('c1', null),
        call: null,
      });
    });

    it('a legacy widget is matched to its call by tool name; the call is the tool and its toolArgs', async () => {
      const key = await active();
      // What a tool batch on a profile-less toolset appends: function responses and legacy widgets, no function calls.
      await append(key, {
        author: 'apphost',
        functionResponses: [response('c1', 'get_weather'), response('c2', 'show_map')],
        widgets: [legacy('show_map', { zoom: 3 }, 'ui://maps/map.html'), legacy('get_weather', { city: 'Oslo' }, 'ui://weather/card.html')],
      });
      await expect(get(key, 'c1')).resolves.toEqual({
        incarnation: 1,
        eventId: 1,
        functionCallId: 'c1',
        toolsetId: null,
        bindingRevision: null,
        sealedResultRef: null,
        widget: legacy('get_weather', { city: 'Oslo' }, 'ui://weather/card.html'),
        call: { name: 'get_weather', args: { city: 'Oslo' } },
      });
      await expect(get(key, 'c2')).resolves.toMatchObject({ widget: legacy('show_map', { zoom: 3 }, 'ui://maps/map.html'), call: { name: 'show_map' } });
    });

    it('two legacy widgets sharing one URI each resolve to their own call', async () => {
      const key = await active();
      await append(key, {
        author: 'apphost',
        functionResponses: [response('c1', 'chart_sales'), response('c2', 'chart_costs')],
        widgets: [legacy('chart_sales', { q: 1 }), legacy('chart_costs', { q: 2 })],
      });
      await expect(get(key, 'c1')).resolves.toMatchObject({ widget: legacy('chart_sales', { q: 1 }), call: { name: 'chart_sales', args: { q: 1 } } });
      await expect(get(key, 'c2')).resolves.toMatchObject({ widget: legacy('chart_costs', { q: 2 }), call: { name: 'chart_costs', args: { q: 2 } } });
    });

    it('two descriptors sharing one URI each resolve to their own call and reference', async () => {
      const key = await active();
      await append(key, {
        author: 'apphost',
        functionResponses: [response('c1', 'show_chart'), response('c2', 'show_chart')],
        widgets: [descriptor('c1', RECORD_A), descriptor('c2', RECORD_B)],
      });
      await expect(get(key, 'c1')).resolves.toMatchObject({ widget: descriptor('c1', RECORD_A), sealedResultRef: { recordId: RECORD_A } });
      await expect(get(key, 'c2')).resolves.toMatchObject({ widget: descriptor('c2', RECORD_B), sealedResultRef: { recordId: RECORD_B } });
    });

    it('several legacy widgets of one tool: told apart by recorded arguments, else by position when every call has one', async () => {
      const byArgs = await active();
      await append(byArgs, {
        author: 'agent',
        functionCalls: [
          { id: 'c1', name: 'show_chart', args: { q: 1 } },
          { id: 'c2', name: 'show_chart', args: { q: 2 } },
        ],
        functionResponses: [response('c1', 'show_chart'), response('c2', 'show_chart')],
        widgets: [legacy('show_chart', { q: 2 }), legacy('show_chart', { q: 1 })], // not in call order
      });
      await expect(get(byArgs, 'c1')).resolves.toMatchObject({ widget: legacy('show_chart', { q: 1 }), call: { name: 'show_chart', args: { q: 1 } } });
      await expect(get(byArgs, 'c2')).resolves.toMatchObject({ widget: legacy('show_chart', { q: 2 }), call: { name: 'show_chart', args: { q: 2 } } });

      const byPosition = await active();
      await append(byPosition, {
        author: 'apphost',
        functionResponses: [response('c1', 'show_chart'), response('c2', 'show_chart')],
        widgets: [legacy('show_chart', { q: 1 }), legacy('show_chart', { q: 2 })],
      });
      await expect(get(byPosition, 'c1')).resolves.toMatchObject({ call: { args: { q: 1 } } });
      await expect(get(byPosition, 'c2')).resolves.toMatchObject({ call: { args: { q: 2 } } });

      // Three calls of the tool, two widgets (one call failed): position cannot say which is whose, so neither is served.
      const ambiguous = await active();
      await append(ambiguous, {
        author: 'apphost',
        functionResponses: [response('c1', 'show_chart'), response('c2', 'show_chart'), response('c3', 'show_chart')],
        widgets: [legacy('show_chart', { q: 1 }), legacy('show_chart', { q: 3 })],
      });
      for (const id of ['c1', 'c2', 'c3']) await expect(get(ambiguous, id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('a legacy widget of another tool, or one whose recorded arguments differ, is not the call’s', async () => {
      const key = await active();
      await append(key, {
        author: 'agent',
        functionCalls: [
          { id: 'c1', name: 'show_chart', args: { q: 1 } },
          { id: 'c2', name: 'plain_tool', args: {} },
        ],
        functionResponses: [response('c1', 'show_chart'), response('c2', 'plain_tool')],
        widgets: [legacy('show_chart', { q: 99 })],
      });
      await expect(get(key, 'c1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(get(key, 'c2')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(get(key, 'c-absent')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('an event-level sealed reference: no widget, the reference, and the recorded call (or null)', async () => {
      const key = await active();
      await append(key, {
        author: 'agent',
        functionCalls: [{ id: 'c1', name: 'pick_date', args: { month: 5 } }],
        functionResponses: [response('c1', 'pick_date'), response('c2', 'pick_time')],
        sealedResultRefs: { c1: { recordId: RECORD_A, schemaVersion: 1 }, c2: { recordId: RECORD_B, schemaVersion: 1 } },
      });
      await expect(get(key, 'c1')).resolves.toEqual({
        incarnation: 1,
        eventId: 1,
        functionCallId: 'c1',
        toolsetId: null,
        bindingRevision: null,
        sealedResultRef: { recordId: RECORD_A, schemaVersion: 1 },
        widget: null,
        call: { name: 'pick_date', args: { month: 5 } },
      });
      await expect(get(key, 'c2')).resolves.toMatchObject({ widget: null, call: null, sealedResultRef: { recordId: RECORD_B } });
    });

    it('a foreign incarnation: the old one is STALE_INCARNATION after re-creation, and the new ledger does not carry the old call', async () => {
      const key = await active();
      await append(key, { author: 'apphost', functionResponses: [response('c1', 'show_chart')], widgets: [descriptor('c1', RECORD_A)] });
      await expect(get(key, 'c1')).resolves.toMatchObject({ incarnation: 1, sealedResultRef: { recordId: RECORD_A } });
      await h.client.request(LifecycleDeleteSession, { session: key });
      await expect(get(key, 'c1')).rejects.toMatchObject({ code: 'NOT_FOUND' }); // deleted
      await h.client.request(LifecycleCreateSession, {
        session: key,
        creationOperationId: `op-${key.sessionId}-again`,
        expectedPrior: { state: 'DELETED', incarnation: 1 },
      });
      await append(key, { author: 'apphost', functionResponses: [response('c9', 'show_chart')], widgets: [descriptor('c9', RECORD_B)] }, 2);
      await expect(get(key, 'c1', { incarnation: 1 })).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'STALE_INCARNATION' } });
      await expect(get(key, 'c1', { incarnation: 2 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(get(key, 'c9', { incarnation: 2 })).resolves.toMatchObject({ incarnation: 2, sealedResultRef: { recordId: RECORD_B } });
    });

    it('another session, user or tenant with the same event and call ids reads as absent', async () => {
      const key = await active();
      await append(key, { author: 'apphost', functionResponses: [response('c1', 'show_chart')], widgets: [descriptor('c1', RECORD_A)] });
      const sibling = await active({ ...key, sessionId: `${key.sessionId}-sibling` });
      await append(sibling, { author: 'apphost', functionResponses: [response('c2', 'show_chart')], widgets: [descriptor('c2', RECORD_B)] });
      await expect(get(sibling, 'c1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(get({ ...key, userId: 'mallory' }, 'c1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(get({ ...key, tenant: 'other-tenant' }, 'c1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(get(key, 'c1', { eventId: 2 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(get(key, 'c1')).resolves.toMatchObject({ sealedResultRef: { recordId: RECORD_A } });
    });

    it('get-widget-standing: the standing as get-session-standing answers it and the event as get-event answers it, on the current incarnation', async () => {
      const principal = { tenant: 'acme', subject: 'widget-standing@example.test' };
      const key = await active();
      const widget = (functionCallId: string, eventId = 1) =>
        h.client.request(LifecycleGetWidgetStanding, { principal: { ...principal, tenant: key.tenant }, session: key, eventId, functionCallId });
      await append(key, { author: 'apphost', functionResponses: [response('c1', 'show_chart')], widgets: [descriptor('c1', RECORD_A)] });
      const standing = await h.client.request(LifecycleGetSessionStanding, { principal: { ...principal, tenant: key.tenant }, session: key });
      await expect(widget('c1')).resolves.toEqual({ ...standing, event: { located: await get(key, 'c1') } });
      // NOT_FOUND of get-event is carried, not thrown: the principal's and the session's answers come first.
      await expect(widget('c2')).resolves.toEqual({ ...standing, event: { missing: expect.stringContaining('function call c2') } });
      await expect(widget('c1', 7)).resolves.toEqual({ ...standing, event: { missing: 'event 7 does not exist' } });
      await h.client.request(LifecycleSetPrincipalRevocation, { principal: { ...principal, tenant: key.tenant }, revoked: true });
      await expect(widget('c1')).resolves.toMatchObject({ revoked: true, event: { located: { sealedResultRef: { recordId: RECORD_A } } } });
      await h.client.request(LifecycleSetPrincipalRevocation, { principal: { ...principal, tenant: key.tenant }, revoked: false });

      // Not ACTIVE: no event is looked up; absent: no session either. Re-created: the new incarnation's ledger only.
      await h.client.request(LifecycleDeleteSession, { session: key });
      await expect(widget('c1')).resolves.toEqual({ revoked: false, session: await h.client.request(LifecycleGetSession, { session: key }), event: null });
      await expect(widget('c1').then((r) => r.session?.state)).resolves.toBe('DELETED');
      await expect(
        h.client.request(LifecycleGetWidgetStanding, { principal, session: { ...key, sessionId: `${key.sessionId}-none` }, eventId: 1, functionCallId: 'c1' }),
      ).resolves.toEqual({ revoked: false, session: null, event: null });
      await h.client.request(LifecycleCreateSession, {
        session: key,
        creationOperationId: `op-${key.sessionId}-again`,
        expectedPrior: { state: 'DELETED', incarnation: 1 },
      });
      await append(key, { author: 'apphost', functionResponses: [response('c9', 'show_chart')], widgets: [descriptor('c9', RECORD_B)] }, 2);
      await expect(widget('c1')).resolves.toMatchObject({ session: { incarnation: 2 }, event: { missing: expect.any(String) } });
      await expect(widget('c9')).resolves.toMatchObject({
        session: { incarnation: 2, state: 'ACTIVE' },
        event: { located: { incarnation: 2, sealedResultRef: { recordId: RECORD_B } } },
      });
    });

    it('get-session-standing and get-widget-standing as the first touch of a legacy session row adopt it as ACTIVE(1), then read its ledger', async () => {
      const principal = { tenant: 'acme', subject: 'legacy-standing@example.test' };
      await h.client.request(LifecycleSetPrincipalRevocation, { principal, revoked: true });
      const first = await h.legacySession();
      await expect(h.client.request(LifecycleGetSessionStanding, { principal: { ...principal, tenant: first.tenant }, session: first })).resolves.toMatchObject(
        {
          revoked: true,
          session: { incarnation: 1, state: 'ACTIVE', adopted: true },
        },
      );
      const second = await h.legacySession();
      const standing = () =>
        h.client.request(LifecycleGetWidgetStanding, { principal: { ...principal, tenant: second.tenant }, session: second, eventId: 1, functionCallId: 'c1' });
      await expect(standing()).resolves.toMatchObject({
        revoked: true,
        session: { incarnation: 1, state: 'ACTIVE', adopted: true },
        event: { missing: 'event 1 does not exist' },
      });
      await append(second, { author: 'apphost', functionResponses: [response('c1', 'show_chart')], widgets: [descriptor('c1', RECORD_A)] });
      await expect(standing()).resolves.toMatchObject({ event: { located: { incarnation: 1, eventId: 1, sealedResultRef: { recordId: RECORD_A } } } });
      await h.client.request(LifecycleSetPrincipalRevocation, { principal, revoked: false });
    });

    it('get-widget-standing rejects a malformed request before any read', async () => {
      const key = await active();
      const principal = { tenant: key.tenant, subject: 'x' };
      await expect(h.client.request(LifecycleGetWidgetStanding, { principal, session: key, eventId: 0, functionCallId: 'c1' })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(h.client.request(LifecycleGetWidgetStanding, { principal, session: key, eventId: 1, functionCallId: '' })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(
        h.client.request(LifecycleGetWidgetStanding, { principal, session: key, eventId: 1, functionCallId: 'c1', incarnation: 1 } as never),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });
  });
});
