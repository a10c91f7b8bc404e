import { BusServer, NatsTransport } from '@apphost/bus';
import {
  AppHostError,
  CatalogClassifyBatch,
  ConnCallTool,
  ConnListTools,
  GovernedPurge,
  GovernedRevoke,
  GovernedRunToolBatch,
  LifecycleAppendEvents,
  LifecycleGetSession,
  RegistryGetToolset,
  SealedCommit,
  SealedCreate,
  type BoundToolHandle,
  type LedgerEventInput,
  type ParsedRequestOf,
} from '@apphost/contracts';
import { bootService, startPrivateNats, uniquePrefix, type PrivateNats, type ServiceUnderTest } from '@apphost/testing';
import { governedOperationsService } from '../service';
import { MIXED_BATCH_MESSAGE, planCalls } from './batch-plan';

/**
 * The batch pipeline of governed-operations against fake collaborators on a private NATS: the real service, the
 * real bus and contracts; lifecycle-store, catalog-policy, binding-registry (incl. the connection owner) and the
 * sealed-result store are recorded fakes, so ordering and "nothing ran" are observable call by call. The whole
 * plane with real servers is `tools/plane/tool-batches.e2e.spec.ts`.
 */
const OWNER = 'fake-owner';
const session = { tenant: 'acme', appName: 'app', userId: 'alice', sessionId: 's1' };
const principal = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };
const hex = (n: number) => n.toString(16).padStart(32, '0');

function handle(name: string, ui: boolean, n: number): BoundToolHandle {
  return {
    handleId: `th_${hex(n)}`,
    toolsetId: 'ts',
    nativeName: name,
    exposedName: name,
    declaration: { name },
    fingerprint: 'a'.repeat(64),
    visibility: ['model', 'app'],
    resourceUri: ui ? `ui://fake/${name}.html` : null,
    catalogGeneration: '1.abc',
    connectionClass: ui ? 'app-safe' : 'full',
    execution: { generationId: '00000000-0000-4000-8000-00000000000' + (ui ? '1' : '2'), fence: 1, ownerInstanceId: OWNER, bindingGeneration: 1 },
  };
}

const TOOLS: Record<string, { ui: boolean; result: () => Record<string, unknown> }> = {
  widget: { ui: true, result: () => ({ content: [{ type: 'text', text: 'shown' }], structuredContent: { secret: 's3cr3t' }, _meta: { m: 1 } }) },
  'bad-widget': { ui: true, result: () => ({ content: [] }) },
  gone: { ui: true, result: () => ({}) },
  drifty: { ui: true, result: () => ({ content: [{ type: 'text', text: 'never' }] }) },
  plain: { ui: false, result: () => ({ content: [{ type: 'text', text: 'plain' }], structuredContent: { kept: true }, _meta: { also: 'kept' } }) },
};

describe('governed-operations run-tool-batch (fake collaborators on a private NATS)', () => {
  let nats: PrivateNats;
  let transport: NatsTransport;
  let fakes: BusServer;
  let service: ServiceUnderTest;
  let log: string[];
  let appended: LedgerEventInput[];
  let created: ParsedRequestOf<typeof SealedCreate>[];
  let committed: ParsedRequestOf<typeof SealedCommit>[];
  let failures: { append?: AppHostError; create?: AppHostError };
  let records = 0;

  beforeAll(async () => {
    nats = await startPrivateNats();
    transport = await NatsTransport.connect({ servers: nats.url, name: 'fakes' });
    fakes = new BusServer({ transport, instanceId: OWNER, queueGroup: 'fakes', logger: { error: () => undefined, warn: () => undefined } });
    fakes.register(LifecycleGetSession, (r) => {
      log.push('get-session');
      return { session: r.session, incarnation: 3, state: 'ACTIVE' as const, version: 2, adopted: false, updatedAt: new Date().toISOString(), cascade: null };
    });
    fakes.register(CatalogClassifyBatch, (r) => {
      log.push('classify');
      const calls = r.calls.map((c, i) => {
        const tool = TOOLS[c.name];
        if (!tool) throw new AppHostError('FAILED_PRECONDITION', 'not in catalog', { details: { reason: 'TOOL_NOT_IN_CATALOG' } });
        return { callId: c.callId, name: c.name, uiAssociated: tool.ui, handle: handle(c.name, tool.ui, i + 1) };
      });
      const kinds = new Set(calls.map((c) => c.uiAssociated));
      return { snapshotId: '00000000-0000-4000-8000-0000000000ff', snapshotDigest: 'b'.repeat(64), classification: kinds.size > 1 ? ('mixed' as const) : kinds.has(true) ? ('ui' as const) : ('non-ui' as const), calls, createdAt: new Date().toISOString() };
    });
    fakes.register(RegistryGetToolset, (r) => {
      log.push('get-toolset');
      return { toolsetId: r.toolsetId, profileId: 'p', state: 'PROFILE_BOUND' as const, bindingGeneration: 1, bindingRevision: 'v1.k1.abcd', readiness: [], transport: 'stdio' as const, protocol: 'auto' as const, liveConnections: 1 };
    });
    fakes.register(
      ConnCallTool,
      (r) => {
        log.push(`call:${r.name}`);
        if (r.name === 'gone') throw new AppHostError('FAILED_PRECONDITION', 'generation gone', { details: { reason: 'CONNECTION_GENERATION_GONE' } });
        return { kind: 'complete' as const, result: TOOLS[r.name].result(), progress: [] };
      },
      { routing: 'instance', instanceSegment: 'conn' },
    );
    fakes.register(
      ConnListTools,
      () => {
        log.push('list');
        // `drifty` changed its input schema after classification; every other tool lists as admitted.
        return { tools: Object.keys(TOOLS).map((name) => (name === 'drifty' ? { name, inputSchema: { type: 'object', properties: { extra: { type: 'string' } } } } : { name })), pages: 1, bytes: 100 };
      },
      { routing: 'instance', instanceSegment: 'conn' },
    );
    fakes.register(SealedCreate, (r) => {
      log.push(`seal:${r.scope.functionCallId}`);
      if (failures.create) throw failures.create;
      created.push(r);
      return { ref: { recordId: `rec${String(++records).padStart(19, '0')}`, schemaVersion: 1 }, state: 'PENDING' as const, created: true };
    });
    fakes.register(LifecycleAppendEvents, (r) => {
      log.push('append');
      if (failures.append) throw failures.append;
      appended.push(...r.events);
      expect(r.provenance).toEqual({ path: 'user-turn' });
      return { incarnation: r.incarnation, eventIds: [41 + appended.length] };
    });
    fakes.register(SealedCommit, (r) => {
      log.push(`commit:${r.key.functionCallId}`);
      committed.push(r);
      return { ref: { recordId: r.key.recordId, schemaVersion: 1 }, state: 'COMMITTED' as const, eventId: r.key.eventId };
    });
    fakes.start();
    service = await bootService(governedOperationsService, uniquePrefix(), { NATS_URL: nats.url });
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await fakes?.stop(100);
    await transport?.close();
    await nats?.stop();
  });

  beforeEach(() => {
    log = [];
    appended = [];
    created = [];
    committed = [];
    failures = {};
  });

  const run = (calls: { functionCallId?: string; tool: string; arguments?: Record<string, unknown> }[]) =>
    service.client.request(GovernedRunToolBatch, { principal, session, invocationId: 'inv', calls }, { timeoutMs: 20_000 });

  it('UI batch: seal every valid UI result PENDING, append ONE event (projection + own refs), then commit; an invalid result is an error response', async () => {
    const res = await run([
      { functionCallId: 'b', tool: 'widget', arguments: { x: 1 } },
      { functionCallId: 'a', tool: 'bad-widget' },
      { functionCallId: 'c', tool: 'widget' },
    ]);
    expect(log.slice(0, 2)).toEqual(['get-session', 'classify']);
    expect(log.slice(2, 4).sort()).toEqual(['get-toolset', 'list']);
    expect(log.slice(4, 7).sort()).toEqual(['call:bad-widget', 'call:widget', 'call:widget']);
    expect(log.slice(7, 9).sort()).toEqual(['seal:b', 'seal:c']);
    expect(log[9]).toBe('append');
    expect(log.slice(10).sort()).toEqual(['commit:b', 'commit:c']);

    expect(res.rejection).toBeNull();
    expect(res.functionResponses.map((r) => r.functionCallId)).toEqual(['b', 'a', 'c']);
    expect(res.functionResponses[0].response).toEqual({ content: [{ type: 'text', text: 'shown' }] });
    expect(res.functionResponses[1].response).toEqual({ error: { code: 'RESULT_INVALID', message: expect.any(String) } });
    expect(res.widgets.map((w) => [w.correlation.functionCallId, w.resourceUri, w.bindingRevision])).toEqual([
      ['b', 'ui://fake/widget.html', 'v1.k1.abcd'],
      ['c', 'ui://fake/widget.html', 'v1.k1.abcd'],
    ]);
    const refs = res.widgets.map((w) => w.sealedResultRef?.recordId);
    expect(new Set(refs).size).toBe(2);

    // The sealed envelope holds the full result and its refresh record; the event never does.
    expect(created[0].envelope.result).toEqual(TOOLS.widget.result());
    expect(created[0].envelope.refresh).toMatchObject({ nativeToolName: 'widget', arguments: { kind: 'inline', value: { x: 1 } }, bindingRevision: 'v1.k1.abcd', initiatingOrigin: 'model', correlation: { invocationId: 'inv', functionCallId: 'b' } });
    expect(created[0].scope).toEqual({ session, incarnation: 3, functionCallId: 'b' });
    expect(appended).toHaveLength(1);
    expect(JSON.stringify(appended[0])).not.toContain('s3cr3t');
    expect(appended[0].widgets).toEqual(res.widgets);
    expect(committed.map((c) => c.key).sort((x, y) => x.functionCallId.localeCompare(y.functionCallId))).toEqual([
      { session, incarnation: 3, eventId: String(res.eventId), functionCallId: 'b', recordId: refs[0] },
      { session, incarnation: 3, eventId: String(res.eventId), functionCallId: 'c', recordId: refs[1] },
    ]);
  });

  it('a mixed batch: one rejection event with one MIXED_BATCH response per call, and no tool call, no seal', async () => {
    const res = await run([{ functionCallId: 'p', tool: 'plain' }, { tool: 'widget' }]);
    expect(log).toEqual(['get-session', 'classify', 'append']);
    expect(res.rejection).toBe('MIXED_BATCH');
    expect(res.widgets).toEqual([]);
    expect(res.functionResponses).toEqual([
      { functionCallId: 'p', name: 'plain', response: { error: { code: 'MIXED_BATCH', message: MIXED_BATCH_MESSAGE } } },
      { functionCallId: expect.stringMatching(/^fc-/), name: 'widget', response: { error: { code: 'MIXED_BATCH', message: MIXED_BATCH_MESSAGE } } },
    ]);
    expect(appended).toEqual([{ author: 'apphost', invocationId: 'inv', functionResponses: res.functionResponses.map((r) => ({ id: r.functionCallId, name: r.name, response: r.response })) }]);
  });

  it('a non-UI batch passes results through unchanged, with no seal and no widget', async () => {
    const res = await run([{ functionCallId: 'p', tool: 'plain' }]);
    expect(log).toEqual(['get-session', 'classify', 'list', 'call:plain', 'append']);
    expect(res.functionResponses[0].response).toEqual(TOOLS.plain.result());
    expect(res.widgets).toEqual([]);
  });

  it('a failure after sealing and before the append: the batch fails, nothing is committed (the PENDING record is left to GC)', async () => {
    failures.append = new AppHostError('FAILED_PRECONDITION', 'stale', { details: { reason: 'STALE_INCARNATION' } });
    await expect(run([{ functionCallId: 'w', tool: 'widget' }])).rejects.toMatchObject({ code: 'FAILED_PRECONDITION' });
    expect([...log.slice(0, 2), ...log.slice(2, 4).sort(), ...log.slice(4)]).toEqual(['get-session', 'classify', 'get-toolset', 'list', 'call:widget', 'seal:w', 'append']);
    expect(committed).toEqual([]);
  });

  it('an initial UI call whose generation is gone is tried exactly once and fails closed for that call', async () => {
    const res = await run([{ functionCallId: 'g', tool: 'gone' }]);
    expect(log.filter((l) => l.startsWith('call:'))).toEqual(['call:gone']);
    expect(res.functionResponses[0].response).toEqual({ error: { code: 'FAILED_PRECONDITION', message: 'generation gone' } });
    expect(res.widgets).toEqual([]);
    expect(created).toEqual([]);
  });

  it('a definition that drifted between classification and call fails closed for that call: not run, not sealed', async () => {
    const res = await run([
      { functionCallId: 'd', tool: 'drifty' },
      { functionCallId: 'w', tool: 'widget' },
    ]);
    expect(log.filter((l) => l.startsWith('call:'))).toEqual(['call:widget']);
    expect(res.functionResponses[0].response).toEqual({ error: { code: 'TOOL_DRIFT', message: expect.stringMatching(/changed/) } });
    expect(res.widgets.map((w) => w.correlation.functionCallId)).toEqual(['w']);
    expect(created.map((c) => c.scope.functionCallId)).toEqual(['w']);
  });

  it('an over-limit UI result fails through the tool error path (no widget), the event is still appended', async () => {
    failures.create = new AppHostError('PAYLOAD_TOO_LARGE', 'too big');
    const res = await run([{ functionCallId: 'w', tool: 'widget' }]);
    expect(res.functionResponses[0].response).toEqual({ error: { code: 'RESULT_TOO_LARGE', message: expect.any(String) } });
    expect(res.widgets).toEqual([]);
    expect(log).toContain('append');
    expect(committed).toEqual([]);
  });

  it('answers the deletion cascade (revoke, purge) idempotently', async () => {
    for (const contract of [GovernedRevoke, GovernedPurge, GovernedRevoke]) expect(await service.client.request(contract, { session, incarnation: 3 })).toEqual({ done: true });
  });

  it('refuses duplicate ids and unknown tools before anything runs', async () => {
    await expect(run([{ functionCallId: 'x', tool: 'plain' }, { functionCallId: 'x', tool: 'plain' }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'DUPLICATE_FUNCTION_CALL_ID' } });
    await expect(run([{ tool: 'nope' }])).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'TOOL_NOT_IN_CATALOG' } });
    expect(log.filter((l) => l !== 'get-session' && l !== 'classify')).toEqual([]);
  });
});

describe('planCalls', () => {
  it('keeps given ids and emission order; populates missing ids deterministically', () => {
    const calls = [{ tool: 't', arguments: { a: 1 } }, { functionCallId: 'given', tool: 'u' }, { tool: 't', arguments: { a: 1 } }];
    const first = planCalls('inv', calls);
    expect(first.map((c) => c.functionCallId)).toEqual([expect.stringMatching(/^fc-[0-9a-f]{32}$/), 'given', expect.stringMatching(/^fc-[0-9a-f]{32}$/)]);
    expect(first[0].functionCallId).not.toBe(first[2].functionCallId);
    expect(planCalls('inv', calls)).toEqual(first);
    expect(planCalls('other', calls)[0].functionCallId).not.toBe(first[0].functionCallId);
    expect(first.map((c) => c.index)).toEqual([0, 1, 2]);
  });

  it('never populates an id the model already used in the batch', () => {
    const generated = planCalls('inv', [{ tool: 't' }])[0].functionCallId;
    const plan = planCalls('inv', [{ tool: 't' }, { functionCallId: generated, tool: 'u' }]);
    expect(plan[1].functionCallId).toBe(generated);
    expect(plan[0].functionCallId).not.toBe(generated);
  });

  it('rejects duplicate ids', () => {
    expect(() => planCalls('inv', [{ functionCallId: 'x', tool: 't' }, { functionCallId: 'x', tool: 't' }])).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
