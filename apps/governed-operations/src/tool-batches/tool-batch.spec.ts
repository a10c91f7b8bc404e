import { AppHostError, GovernedRunToolBatch } from '@apphost/contracts';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import { descriptors, eventually, latch } from '@apphost/testing';
import { SealedCommits } from '../calls/sealed-commits';
import type { GovernedFaultPoint } from '../governed.faults';
import { principal, session, startFakePlane, TOOLS, type FakePlane, type FakeState } from '../test/fake-plane';
import { MIXED_BATCH_MESSAGE, planCalls } from './batch-plan';

/** What names the batch on its event (the replay identity its retries are matched against). */
const REPLAY_METADATA = { apphostToolBatch: { replayDigest: expect.stringMatching(/^[0-9a-f]{64}$/) } };

describe('governed-operations run-tool-batch (fake collaborators on a private NATS)', () => {
  let plane: FakePlane;
  let state: FakeState;

  beforeAll(async () => {
    plane = await startFakePlane();
    state = plane.state;
  }, 60_000);

  afterAll(async () => {
    await plane?.stop();
  });

  beforeEach(() => plane.reset());

  const faults = () => plane.service.running.app.get<FaultPoints<GovernedFaultPoint>>(FAULT_POINTS);
  /** The commits run after the reply: they land within a deadline. */
  const committedCount = (n: number) => eventually(async () => state.committed.length === n, 5_000);
  const commitsCounted = async (outcome: 'committed' | 'failed') => {
    const metric = await plane.service.running.context.metrics.registry.getSingleMetric('apphost_governed_sealed_commits_total')?.get();
    return metric?.values.find((v) => v.labels['outcome'] === outcome)?.value ?? 0;
  };

  const run = (calls: { functionCallId?: string; tool: string; arguments?: Record<string, unknown> }[]) =>
    plane.service.client.request(GovernedRunToolBatch, { principal, session, invocationId: 'inv', calls }, { timeoutMs: 20_000 });

  it('UI batch: seal every valid UI result PENDING, append ONE event (projection + own refs), then commit; an invalid result is an error response', async () => {
    const res = await run([
      { functionCallId: 'b', tool: 'widget', arguments: { x: 1 } },
      { functionCallId: 'a', tool: 'bad-widget' },
      { functionCallId: 'c', tool: 'widget' },
    ]);
    await committedCount(2);
    expect(state.log.slice(0, 2)).toEqual(['get-session', 'classify']);
    expect(state.log.slice(2, 4).sort()).toEqual(['get-toolset', 'list']);
    expect(state.log.slice(4, 7).sort()).toEqual(['call:bad-widget', 'call:widget', 'call:widget']);
    expect(state.log.slice(7, 9).sort()).toEqual(['seal:b', 'seal:c']);
    expect(state.log[9]).toBe('append');
    expect(state.log.slice(10).sort()).toEqual(['commit:b', 'commit:c']);

    expect(res.rejection).toBeNull();
    expect(res.functionResponses.map((r) => r.functionCallId)).toEqual(['b', 'a', 'c']);
    expect(res.functionResponses[0].response).toEqual({ content: [{ type: 'text', text: 'shown' }] });
    expect(res.functionResponses[1].response).toEqual({ error: { code: 'RESULT_INVALID', message: expect.any(String) } });
    expect(descriptors(res).map((w) => [w.correlation.functionCallId, w.resourceUri, w.bindingRevision])).toEqual([
      ['b', 'ui://fake/widget.html', 'v1.k1.abcd'],
      ['c', 'ui://fake/widget.html', 'v1.k1.abcd'],
    ]);
    const refs = descriptors(res).map((w) => w.sealedResultRef?.recordId);
    expect(new Set(refs).size).toBe(2);

    // The sealed envelope holds the full result and its refresh record; the event never does.
    expect(state.created[0].envelope.result).toEqual(TOOLS.widget.result());
    expect(state.created[0].envelope.refresh).toMatchObject({
      nativeToolName: 'widget',
      arguments: { kind: 'inline', value: { x: 1 } },
      bindingRevision: 'v1.k1.abcd',
      initiatingOrigin: 'model',
      correlation: { invocationId: 'inv', functionCallId: 'b' },
    });
    expect(state.created[0].scope).toEqual({ session, incarnation: 3, functionCallId: 'b' });
    expect(state.appended).toHaveLength(1);
    expect(JSON.stringify(state.appended[0])).not.toContain('s3cr3t');
    expect(state.appended[0].widgets).toEqual(res.widgets);
    expect(state.committed.map((c) => c.key).sort((x, y) => x.functionCallId.localeCompare(y.functionCallId))).toEqual([
      { session, incarnation: 3, eventId: String(res.eventId), functionCallId: 'b', recordId: refs[0] },
      { session, incarnation: 3, eventId: String(res.eventId), functionCallId: 'c', recordId: refs[1] },
    ]);
  });

  it('a mixed batch: one rejection event with one MIXED_BATCH response per call, and no tool call, no seal', async () => {
    const res = await run([{ functionCallId: 'p', tool: 'plain' }, { tool: 'widget' }]);
    expect(state.log).toEqual(['get-session', 'classify', 'get-toolset', 'append']);
    expect(res.rejection).toBe('MIXED_BATCH');
    expect(res.widgets).toEqual([]);
    expect(res.functionResponses).toEqual([
      { functionCallId: 'p', name: 'plain', response: { error: { code: 'MIXED_BATCH', message: MIXED_BATCH_MESSAGE } } },
      { functionCallId: expect.stringMatching(/^fc-/), name: 'widget', response: { error: { code: 'MIXED_BATCH', message: MIXED_BATCH_MESSAGE } } },
    ]);
    expect(state.appended).toEqual([
      {
        author: 'apphost',
        invocationId: 'inv',
        functionResponses: res.functionResponses.map((r) => ({ id: r.functionCallId, name: r.name, response: r.response })),
        customMetadata: REPLAY_METADATA,
      },
    ]);
  });

  it('a non-UI batch passes results through unchanged, with no seal and no widget', async () => {
    const res = await run([{ functionCallId: 'p', tool: 'plain' }]);
    expect(state.log).toEqual(['get-session', 'classify', 'get-toolset', 'list', 'call:plain', 'append']);
    expect(res.functionResponses[0].response).toEqual(TOOLS.plain.result());
    expect(res.widgets).toEqual([]);
  });

  it('a failure after sealing and before the append: the batch fails, nothing is committed (the PENDING record is left to GC)', async () => {
    state.failures.append = new AppHostError('FAILED_PRECONDITION', 'stale', { details: { reason: 'STALE_INCARNATION' } });
    // The tool ran: the caller is told so, not handed the store's code.
    await expect(run([{ functionCallId: 'w', tool: 'widget' }])).rejects.toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      details: { reason: 'EXECUTED_NOT_RECORDED', cause: 'FAILED_PRECONDITION' },
    });
    expect([...state.log.slice(0, 2), ...state.log.slice(2, 4).sort(), ...state.log.slice(4)]).toEqual([
      'get-session',
      'classify',
      'get-toolset',
      'list',
      'call:widget',
      'seal:w',
      'append',
    ]);
    expect(state.committed).toEqual([]);
  });

  it("a classification that answers the toolsets' facts: no get-toolset; the generation is still re-listed before the call", async () => {
    state.classifyAnswersFacts = true;
    const res = await run([{ functionCallId: 'w', tool: 'widget' }]);
    await committedCount(1);
    expect(state.log).toEqual(['get-session', 'classify', 'list', 'call:widget', 'seal:w', 'append', 'commit:w']);
    expect(descriptors(res)).toEqual([expect.objectContaining({ bindingRevision: 'v1.k1.abcd', toolsetId: 'ts' })]);
  });

  it('facts answered by the classification still hold a call for confirmation', async () => {
    state.classifyAnswersFacts = true;
    state.requireConfirmation['ts'] = ['plain'];
    const res = await run([{ functionCallId: 'p', tool: 'plain' }]);
    expect(res.confirmations.map((c) => c.functionCallId)).toEqual(['p']);
    expect(state.log.filter((l) => l.startsWith('call:') || l === 'get-toolset')).toEqual([]);
  });

  it('an initial UI call whose generation is gone is tried exactly once and fails closed for that call', async () => {
    const res = await run([{ functionCallId: 'g', tool: 'gone' }]);
    expect(state.log.filter((l) => l.startsWith('call:'))).toEqual(['call:gone']);
    expect(res.functionResponses[0].response).toEqual({ error: { code: 'FAILED_PRECONDITION', message: 'generation gone' } });
    expect(res.widgets).toEqual([]);
    expect(state.created).toEqual([]);
  });

  it('a definition that drifted between classification and call fails closed for that call: not run, not sealed', async () => {
    const res = await run([
      { functionCallId: 'd', tool: 'drifty' },
      { functionCallId: 'w', tool: 'widget' },
    ]);
    expect(state.log.filter((l) => l.startsWith('call:'))).toEqual(['call:widget']);
    expect(res.functionResponses[0].response).toEqual({ error: { code: 'TOOL_DRIFT', message: expect.stringMatching(/changed/) } });
    expect(descriptors(res).map((w) => w.correlation.functionCallId)).toEqual(['w']);
    expect(state.created.map((c) => c.scope.functionCallId)).toEqual(['w']);
  });

  it('an over-limit UI result fails through the tool error path (no widget), the event is still appended', async () => {
    state.failures.create = new AppHostError('PAYLOAD_TOO_LARGE', 'too big');
    const res = await run([{ functionCallId: 'w', tool: 'widget' }]);
    expect(res.functionResponses[0].response).toEqual({ error: { code: 'RESULT_TOO_LARGE', message: expect.any(String) } });
    expect(res.widgets).toEqual([]);
    expect(state.log).toContain('append');
    expect(state.committed).toEqual([]);
  });

  it('a MODEL_ONLY toolset: the legacy widget payload, the result unchanged, no seal and no store dependency', async () => {
    state.failures.create = new AppHostError('UNAVAILABLE', 'the sealed-result store is down'); // must not matter
    const res = await run([{ functionCallId: 'l', tool: 'legacy-widget', arguments: { q: 1 } }]);
    expect(state.log).toEqual(['get-session', 'classify', 'get-toolset', 'list', 'call:legacy-widget', 'append']);
    expect(res.functionResponses).toEqual([{ functionCallId: 'l', name: 'legacy-widget', response: TOOLS['legacy-widget'].result() }]);
    expect(res.widgets).toEqual([{ resourceUri: 'ui://fake/legacy-widget.html', tool: 'legacy-widget', toolArgs: { q: 1 } }]);
    expect(state.appended[0]).toEqual({
      author: 'apphost',
      invocationId: 'inv',
      functionResponses: [{ id: 'l', name: 'legacy-widget', response: TOOLS['legacy-widget'].result() }],
      widgets: res.widgets,
      customMetadata: REPLAY_METADATA,
    });
    expect(state.created).toEqual([]);
    expect(state.committed).toEqual([]);
  });

  it('a profile-less UI call beside a non-UI call is not a mixed batch (the rejection applies under a bound profile only)', async () => {
    const res = await run([
      { functionCallId: 'l', tool: 'legacy-widget' },
      { functionCallId: 'p', tool: 'plain' },
    ]);
    expect(res.rejection).toBeNull();
    expect(state.log.filter((l) => l.startsWith('call:')).sort()).toEqual(['call:legacy-widget', 'call:plain']);
    expect(res.functionResponses.map((r) => r.response)).toEqual([TOOLS['legacy-widget'].result(), TOOLS.plain.result()]);
    expect(res.widgets).toEqual([{ resourceUri: 'ui://fake/legacy-widget.html', tool: 'legacy-widget', toolArgs: {} }]);
  });

  it('a bound UI call beside a profile-less UI call is all-UI: a descriptor and a legacy payload in one event', async () => {
    const res = await run([
      { functionCallId: 'w', tool: 'widget' },
      { functionCallId: 'l', tool: 'legacy-widget' },
    ]);
    expect(res.rejection).toBeNull();
    expect(res.widgets).toEqual([
      expect.objectContaining({ schemaVersion: 1, sealedResultRef: expect.any(Object) }),
      { resourceUri: 'ui://fake/legacy-widget.html', tool: 'legacy-widget', toolArgs: {} },
    ]);
    expect(state.created.map((c) => c.scope.functionCallId)).toEqual(['w']);
  });

  it('the reply does not wait for the commit: the batch answers while its commit is held, and the record is committed once released', async () => {
    const hold = latch();
    faults().arm('batch.before-commit', hold.action);
    const answered = run([{ functionCallId: 'w', tool: 'widget' }]);
    await hold.reached;
    const res = await answered; // answered with the commit still held at the fault point
    expect(descriptors(res).map((w) => w.correlation.functionCallId)).toEqual(['w']);
    expect(state.appended).toHaveLength(1);
    expect(state.committed).toEqual([]);
    expect(plane.service.running.app.get(SealedCommits).pending).toBe(1);
    const before = await commitsCounted('committed');
    hold.release();
    await committedCount(1);
    expect(state.committed[0].key).toEqual({
      session,
      incarnation: 3,
      eventId: String(res.eventId),
      functionCallId: 'w',
      recordId: descriptors(res)[0].sealedResultRef?.recordId,
    });
    expect(plane.service.running.app.get(SealedCommits).pending).toBe(0);
    expect(await commitsCounted('committed')).toBe(before + 1);
  });

  it('a commit that fails after the append: the batch still answers its event, the failure is counted, nothing is committed', async () => {
    const before = await commitsCounted('failed');
    faults().arm('batch.before-commit');
    const res = await run([{ functionCallId: 'w', tool: 'widget' }]);
    expect(res.rejection).toBeNull();
    expect(state.appended).toHaveLength(1);
    expect(state.appended[0].widgets).toEqual(res.widgets);
    await eventually(async () => (await commitsCounted('failed')) === before + 1, 5_000);
    // Nothing reached the store; the real store binds the record through the event (tools/plane/tool-batches.e2e.spec.ts).
    expect(state.committed).toEqual([]);
  });

  it('a failure at the fault point before the append: nothing is appended or committed (the PENDING record is left to GC)', async () => {
    faults().arm('batch.before-append');
    await expect(run([{ functionCallId: 'w', tool: 'widget' }])).rejects.toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      details: { reason: 'EXECUTED_NOT_RECORDED' },
    });
    expect(state.log).toContain('seal:w');
    expect(state.log).not.toContain('append');
    expect(state.committed).toEqual([]);
  });

  it('refuses duplicate ids and unknown tools before anything runs', async () => {
    await expect(
      run([
        { functionCallId: 'x', tool: 'plain' },
        { functionCallId: 'x', tool: 'plain' },
      ]),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'DUPLICATE_FUNCTION_CALL_ID' } });
    await expect(run([{ tool: 'nope' }])).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'TOOL_NOT_IN_CATALOG' } });
    expect(state.log.filter((l) => l !== 'get-session' && l !== 'classify' && l !== 'get-toolset')).toEqual([]);
  });
});

describe('planCalls', () => {
  it('keeps given ids and emission order; populates missing ids deterministically', () => {
    const calls = [
      { tool: 't', arguments: { a: 1 } },
      { functionCallId: 'given', tool: 'u' },
      { tool: 't', arguments: { a: 1 } },
    ];
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
    expect(() =>
      planCalls('inv', [
        { functionCallId: 'x', tool: 't' },
        { functionCallId: 'x', tool: 't' },
      ]),
    ).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
