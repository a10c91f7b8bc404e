import {
  LifecycleAppendEvents,
  LifecycleCreateSession,
  LifecycleGetEvent,
  LifecycleListEvents,
  type AppendProvenance,
  type LedgerEventInput,
  type SessionKey,
} from '@apphost/contracts';
import { describeOnPostgres } from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';

const RECORD_A = 'rec_AAAAAAAAAAAAAAAAAAAAAA';
const RECORD_B = 'rec_BBBBBBBBBBBBBBBBBBBBBB';
const widget = (functionCallId: string, recordId: string | null) => ({
  schemaVersion: 1 as const,
  resourceUri: 'ui://dash/view.html',
  correlation: { invocationId: 'inv-1', functionCallId },
  serverId: 'srv',
  toolsetId: 'ts',
  bindingRevision: 'k1:abc',
  sealedResultRef: recordId ? { recordId, schemaVersion: 1 } : null,
});

/** An event carrying every protected field forged, at the top level and in custom metadata. */
const forged = (extra: Partial<LedgerEventInput> = {}): LedgerEventInput => ({
  author: 'mallory-agent',
  content: { parts: [{ text: 'hi' }] },
  audience: 'model',
  invocationOrigin: 'model',
  emitter: 'session-api',
  immediateCaller: 'host',
  customMetadata: { audience: 'app_audit', invocation_origin: 'user', emitter: 'x', keep: 'me' },
  ...extra,
});

const PATHS: [
  AppendProvenance,
  { audience: string | null; invocationOrigin: string; emitter: string; immediateCaller: string | null },
  { audience: string | null; invocationOrigin: string; emitter: string; immediateCaller: string | null },
][] = [
  [
    { path: 'user-turn' },
    { audience: null, invocationOrigin: 'user', emitter: 'runner', immediateCaller: null },
    { audience: null, invocationOrigin: 'user', emitter: 'runner', immediateCaller: 'model' },
  ],
  [
    { path: 'ui-message' },
    { audience: null, invocationOrigin: 'mcp_app', emitter: 'runner', immediateCaller: null },
    { audience: null, invocationOrigin: 'mcp_app', emitter: 'runner', immediateCaller: 'model' },
  ],
  [
    { path: 'app-operation' },
    { audience: 'app_audit', invocationOrigin: 'mcp_app', emitter: 'host', immediateCaller: 'app' },
    { audience: 'app_audit', invocationOrigin: 'mcp_app', emitter: 'host', immediateCaller: 'app' },
  ],
  [
    { path: 'bootstrap-render' },
    { audience: 'app_audit', invocationOrigin: 'mcp_app', emitter: 'host', immediateCaller: 'host' },
    { audience: 'app_audit', invocationOrigin: 'mcp_app', emitter: 'host', immediateCaller: 'host' },
  ],
  [
    { path: 'system' },
    { audience: null, invocationOrigin: 'system', emitter: 'system', immediateCaller: null },
    { audience: null, invocationOrigin: 'system', emitter: 'system', immediateCaller: null },
  ],
  [
    { path: 'reconciliation', ingress: 'mcp_app' },
    { audience: 'app_audit', invocationOrigin: 'mcp_app', emitter: 'system', immediateCaller: null },
    { audience: 'app_audit', invocationOrigin: 'mcp_app', emitter: 'system', immediateCaller: null },
  ],
  [
    { path: 'reconciliation', ingress: 'user' },
    { audience: null, invocationOrigin: 'user', emitter: 'system', immediateCaller: null },
    { audience: null, invocationOrigin: 'user', emitter: 'system', immediateCaller: null },
  ],
  [
    { path: 'session-api' },
    { audience: null, invocationOrigin: 'system', emitter: 'session-api', immediateCaller: null },
    { audience: null, invocationOrigin: 'system', emitter: 'session-api', immediateCaller: null },
  ],
];

describeOnPostgres('lifecycle-store event ledger', (target) => {
  describe('through the bus', () => {
    const h = new LifecycleHarness(target);

    beforeAll(() => h.start(), 60_000);
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    async function active(importedEvents?: LedgerEventInput[]): Promise<SessionKey> {
      const key = h.key();
      await h.client.request(LifecycleCreateSession, { session: key, creationOperationId: `op-${key.sessionId}`, importedEvents });
      return key;
    }
    const append = (
      session: SessionKey,
      events: LedgerEventInput[],
      provenance: AppendProvenance = { path: 'user-turn' },
      extra: { incarnation?: number; fencingToken?: number } = {},
    ) => h.client.request(LifecycleAppendEvents, { session, incarnation: extra.incarnation ?? 1, provenance, events, fencingToken: extra.fencingToken });

    it.each(PATHS)('forged protected fields are stripped and stamped on the %j append path', async (provenance, plain, tool) => {
      const key = await active();
      const toolEvent = forged({ functionCalls: [{ id: 'c1', name: 'show' }], functionResponses: [{ id: 'c1', name: 'show', response: { content: [] } }] });
      await append(key, [forged(), toolEvent], provenance);
      const { events } = await h.client.request(LifecycleListEvents, { session: key });
      expect(events.map(({ audience, invocationOrigin, emitter, immediateCaller }) => ({ audience, invocationOrigin, emitter, immediateCaller }))).toEqual([
        plain,
        tool,
      ]);
      expect(events[0].author).toBe('mallory-agent'); // the declared author is preserved
      expect(events[0].customMetadata).toEqual({ keep: 'me' });
      const rows = await h.eventRows(key);
      expect(
        rows.map((r) => ({ audience: r.audience, invocationOrigin: r.invocation_origin, emitter: r.emitter, immediateCaller: r.immediate_caller })),
      ).toEqual([plain, tool]);
    });

    it('forged protected fields are stripped and stamped on the import path of a first-party create', async () => {
      const key = await active([forged()]);
      const { events } = await h.client.request(LifecycleListEvents, { session: key });
      expect(events[0]).toMatchObject({
        audience: null,
        invocationOrigin: 'system',
        emitter: 'session-api',
        immediateCaller: null,
        author: 'mallory-agent',
        customMetadata: { keep: 'me' },
      });
    });

    it.each([
      [
        'a sealedResultRef without a matching function response',
        [{ author: 'a', functionResponses: [{ id: 'c2', name: 't' }], widgets: [widget('c1', RECORD_A)] }],
        'UNMATCHED_SEALED_RESULT_REF',
      ],
      [
        'an event-level reference without a matching function response',
        [{ author: 'a', functionResponses: [{ id: 'c2', name: 't' }], sealedResultRefs: { c1: { recordId: RECORD_A, schemaVersion: 1 } } }],
        'UNMATCHED_SEALED_RESULT_REF',
      ],
      [
        'a duplicate reference across two widgets',
        [
          {
            author: 'a',
            functionResponses: [
              { id: 'c1', name: 't' },
              { id: 'c2', name: 't' },
            ],
            widgets: [widget('c1', RECORD_A), widget('c2', RECORD_A)],
          },
        ],
        'DUPLICATE_SEALED_RESULT_REF',
      ],
      [
        'two references for one function call (both placements)',
        [
          {
            author: 'a',
            functionResponses: [{ id: 'c1', name: 't' }],
            widgets: [widget('c1', RECORD_A)],
            sealedResultRefs: { c1: { recordId: RECORD_B, schemaVersion: 1 } },
          },
        ],
        'DUPLICATE_SEALED_RESULT_REF',
      ],
      [
        'a duplicate function-call id',
        [
          { author: 'a', functionCalls: [{ id: 'c1', name: 't' }] },
          { author: 'a', functionCalls: [{ id: 'c1', name: 't' }] },
        ],
        'DUPLICATE_FUNCTION_CALL_ID',
      ],
      [
        'a duplicate function-response id',
        [
          {
            author: 'a',
            functionResponses: [
              { id: 'c1', name: 't' },
              { id: 'c1', name: 't' },
            ],
          },
        ],
        'DUPLICATE_FUNCTION_CALL_ID',
      ],
    ] as [string, LedgerEventInput[], string][])('cross-validation: %s fails with INVALID_ARGUMENT and appends nothing', async (_label, events, reason) => {
      const key = await active();
      await expect(append(key, events, { path: 'app-operation' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason } });
      expect(await h.eventRows(key)).toEqual([]);
    });

    /** One event with a reference in each placement: a widget descriptor (c1), a bare sealed ref (c2), no ref (c3). */
    const bothPlacements = (): LedgerEventInput => ({
      author: 'a',
      functionResponses: [
        { id: 'c1', name: 't' },
        { id: 'c2', name: 't' },
        { id: 'c3', name: 't' },
      ],
      widgets: [widget('c1', RECORD_A), widget('c3', null)],
      sealedResultRefs: { c2: { recordId: RECORD_B, schemaVersion: 1 } },
    });

    it('accepts references in both placements when each matches its own function response', async () => {
      const key = await active();
      const event = bothPlacements();
      await expect(append(key, [event], { path: 'app-operation' })).resolves.toEqual({ incarnation: 1, eventIds: [1] });
    });

    it('descriptors are strict: a grant or a digest smuggled into a descriptor is INVALID_ARGUMENT before any effect', async () => {
      const key = await active();
      const bad = { author: 'a', functionResponses: [{ id: 'c1', name: 't' }], widgets: [{ ...widget('c1', RECORD_A), grant: 'secret-grant' }] };
      await expect(append(key, [bad as unknown as LedgerEventInput])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(await h.eventRows(key)).toEqual([]);
    });

    it('public serialization never contains sealed bytes, digests or grants', async () => {
      const key = await active([{ author: 'user', content: { parts: [{ text: 'imported' }] } }]);
      await append(
        key,
        [
          {
            author: 'agent',
            functionResponses: [
              {
                id: 'c1',
                name: 'show',
                response: { content: [{ type: 'text', text: 'ok' }], structuredContent: { secret: 'SEALED-BYTES' }, _meta: { grant: 'GRANT' } },
              },
            ],
            widgets: [widget('c1', RECORD_A)],
          },
        ],
        { path: 'user-turn' },
      );
      const page = await h.client.request(LifecycleListEvents, { session: key });
      const text = JSON.stringify(page);
      expect(text).not.toContain('SEALED-BYTES');
      expect(text).not.toContain('GRANT');
      expect(text).not.toMatch(/digest|fence|receipt|creationOperation/i);
      expect(page.events[1].functionResponses).toEqual([{ id: 'c1', name: 'show', response: { content: [{ type: 'text', text: 'ok' }] } }]);
      expect(page.events[1].widgets?.[0]).toHaveProperty('sealedResultRef', { recordId: RECORD_A, schemaVersion: 1 }); // an opaque locator only
    });

    it('get-event verifies session, incarnation, event and function call against the ledger; anything foreign is NOT_FOUND', async () => {
      const key = await active();
      const event = bothPlacements();
      await append(key, [event], { path: 'user-turn' });
      const get = (over: Partial<{ session: SessionKey; incarnation: number; eventId: number; functionCallId: string }> = {}) =>
        h.client.request(LifecycleGetEvent, { session: key, incarnation: 1, eventId: 1, functionCallId: 'c1', ...over });
      await expect(get()).resolves.toEqual({
        incarnation: 1,
        eventId: 1,
        functionCallId: 'c1',
        toolsetId: 'ts',
        bindingRevision: 'k1:abc',
        sealedResultRef: { recordId: RECORD_A, schemaVersion: 1 },
        widget: widget('c1', RECORD_A),
        call: null,
      });
      await expect(get({ functionCallId: 'c2' })).resolves.toMatchObject({
        toolsetId: null,
        sealedResultRef: { recordId: RECORD_B, schemaVersion: 1 },
        widget: null,
      });
      await expect(get({ functionCallId: 'c3' })).resolves.toMatchObject({ toolsetId: 'ts', sealedResultRef: null, widget: widget('c3', null) }); // a descriptor without a sealed result
      await expect(get({ functionCallId: 'c4' })).rejects.toMatchObject({ code: 'NOT_FOUND' }); // not on the event
      await expect(get({ eventId: 2 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(get({ session: { ...key, tenant: 'other-tenant' } })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(get({ incarnation: 2 })).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'STALE_INCARNATION' } });
    });

    it('assigns monotonic, gap-free ids under 20 concurrent appends, and pages through them', async () => {
      const key = await active([{ author: 'user' }]);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => append(key, [{ author: `w${i}` }, { author: `w${i}` }])));
      const ids = results.flatMap((r) => r.eventIds).sort((a, b) => a - b);
      expect(ids).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));
      for (const r of results) expect(r.eventIds[1]).toBe(r.eventIds[0] + 1);
      const first = await h.client.request(LifecycleListEvents, { session: key, limit: 25 });
      expect(first.events.map((e) => e.id)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(first.nextAfterId).toBe(25);
      const second = await h.client.request(LifecycleListEvents, { session: key, afterId: first.nextAfterId!, limit: 25 });
      expect(second.events.map((e) => e.id)).toEqual(Array.from({ length: 16 }, (_, i) => i + 26));
      expect(second.nextAfterId).toBeNull();
    });

    it('an append with an incarnation other than the current ACTIVE(n) fails STALE_INCARNATION; an unknown session is NOT_FOUND', async () => {
      const key = await active();
      await expect(append(key, [{ author: 'a' }], { path: 'user-turn' }, { incarnation: 2 })).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        details: { reason: 'STALE_INCARNATION' },
      });
      await expect(append(h.key(), [{ author: 'a' }])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('the optional fencing token is checked in the same statement: an older token than one seen fails STALE_FENCING_TOKEN', async () => {
      const key = await active();
      await expect(append(key, [{ author: 'a' }], { path: 'user-turn' }, { fencingToken: 5 })).resolves.toEqual({ incarnation: 1, eventIds: [1] });
      await expect(append(key, [{ author: 'a' }], { path: 'user-turn' }, { fencingToken: 5 })).resolves.toEqual({ incarnation: 1, eventIds: [2] });
      await expect(append(key, [{ author: 'a' }], { path: 'user-turn' }, { fencingToken: 4 })).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        details: { reason: 'STALE_FENCING_TOKEN', seen: 5 },
      });
      await expect(append(key, [{ author: 'a' }], { path: 'user-turn' }, { fencingToken: 9 })).resolves.toEqual({ incarnation: 1, eventIds: [3] });
      await expect(append(key, [{ author: 'a' }])).resolves.toEqual({ incarnation: 1, eventIds: [4] }); // appends without a token are not fenced
      expect(await h.eventRows(key)).toHaveLength(4);
    });

    it('rejects malformed appends before any effect (contract validation)', async () => {
      const key = await active();
      await expect(
        h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'model' } as never, events: [{ author: 'a' }] }),
      ).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(
        h.client.request(LifecycleAppendEvents, { session: key, incarnation: 1, provenance: { path: 'user-turn' }, events: [] }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(await h.eventRows(key)).toEqual([]);
    });
  });
});
