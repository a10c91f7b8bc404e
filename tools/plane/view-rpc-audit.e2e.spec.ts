import fs from 'node:fs';
import { SealedResolve } from '@apphost/contracts';
import { STATEFUL_NONCE_RESOURCE, eventually } from '@apphost/testing';
import { fixtureSpec } from './catalog-harness';
import {
  auditOf,
  auditOperations,
  callsFile,
  executed,
  openView,
  resultOf,
  rpcErrorOf,
  sessionEvents,
  startRpcPlane,
  structuredOf,
  type LiveView,
  type RpcPlane,
} from './view-rpc-harness';
import { viewProfile } from './views-harness';

/**
 * App audit events of View operations, end to end: one per executed operation and per denial after admission,
 * `audience: "app_audit"`, never result bytes, UI-associated results sealed and resolvable through
 * `sealedResultRefs`, left out of model-facing reads unless `?audience=all`, and compacted per the profile's
 * retention so a polling View does not grow the ledger without bound.
 * Budget: ~30 s to boot and bind, ~25 s of tests.
 */
jest.setTimeout(120_000);

describe('View RPC audit events in the plane', () => {
  let rpcPlane: RpcPlane;
  let alice: string;
  let log: string;
  const rpc = () => rpcPlane.rpc;

  beforeAll(async () => {
    log = callsFile(`rpc-audit-${process.pid}`, 'audit');
    const base = viewProfile();
    rpcPlane = await startRpcPlane({
      apps: { audit: ['audit'], polling: ['polling'] },
      profiles: { p1: base, 'p-retain': { ...base, audit: { maxRecordsPerView: 5 } } },
      toolsets: {
        audit: fixtureSpec('stateful-nonce', 'p1', [`--calls-file=${log}`]),
        polling: fixtureSpec('stateful-nonce', 'p-retain', [`--calls-file=${log}.polling`]),
      },
    });
    alice = await rpcPlane.bearer('alice');
  }, 120_000);

  afterAll(async () => {
    await rpcPlane?.stop();
    for (const file of [log, `${log}.polling`]) fs.rmSync(file, { force: true });
  });

  describe('one View’s operations', () => {
    let view: LiveView;
    let minted: Record<string, unknown>;
    let whoami: Record<string, unknown>;
    let read: Record<string, unknown>;

    beforeAll(async () => {
      view = await openView(rpcPlane.http, alice, { appName: 'audit', sessionId: 's-audit', tool: 'start-session' });
      whoami = structuredOf(await rpc().call(view, 'whoami'));
      minted = resultOf(await rpc().call(view, 'start-session', { label: 'from-view' }, { key: 'k-audit' }));
      expect(resultOf(await rpc().call(view, 'start-session', { label: 'from-view' }, { key: 'k-audit' }))).toEqual(minted);
      expect(rpcErrorOf(await rpc().call(view, 'model-only')).data).toMatchObject({ reason: 'TOOL_NOT_APP_VISIBLE' });
      read = resultOf(await rpc().read(view, STATEFUL_NONCE_RESOURCE));
      expect(rpcErrorOf(await rpc().read(view, 'https://elsewhere.example/x.html')).data).toMatchObject({ reason: 'RESOURCE_POLICY_DENIED' });
      // Neither a malformed message nor a notification is an operation.
      expect(rpcErrorOf(await rpc().request(view, 'no/such-method', {})).code).toBe(-32601);
      expect((await rpc().notify(view, 'ui/notifications/size-changed', { width: 10, height: 10 })).status).toBe(202);
    });

    it('one event per executed operation and per denial, with who, what, the decision and the outcome', async () => {
      const ops = await eventually(async () => {
        const found = await auditOperations(rpcPlane.http, view);
        return found.length >= 6 ? found : undefined;
      }, 10_000);
      expect(ops.map(({ record }) => [record.method, record.tool ?? record.uri, record.decision, record.outcome, record.reason, record.replayed])).toEqual([
        ['tools/call', 'whoami', 'executed', 'ok', null, false],
        ['tools/call', 'start-session', 'executed', 'ok', null, false],
        ['tools/call', 'start-session', 'executed', 'ok', null, true],
        ['tools/call', 'model-only', 'denied', 'PERMISSION_DENIED', 'TOOL_NOT_APP_VISIBLE', false],
        ['resources/read', STATEFUL_NONCE_RESOURCE, 'executed', 'ok', null, false],
        ['resources/read', 'https://elsewhere.example/x.html', 'denied', 'PERMISSION_DENIED', 'RESOURCE_POLICY_DENIED', false],
      ]);
      for (const { event, record } of ops) {
        expect(event).toMatchObject({ audience: 'app_audit', invocationOrigin: 'mcp_app', immediateCaller: 'app', incarnation: view.incarnation });
        expect(record).toMatchObject({ kind: 'operation', viewId: view.viewId, widgetId: expect.any(String), durationMs: expect.any(Number) });
      }
      // The replay ran nothing: the fixture executed start-session twice (the model's call, the key's first use).
      expect(executed(log, 'start-session')).toBe(2);
    });

    it('never result bytes: no nonce, pid, connection id or document text in any audit event', async () => {
      const audit = await auditOf(rpcPlane.http, view);
      const text = JSON.stringify(audit.map(({ event }) => event));
      const nonce = (minted.structuredContent as { nonce: string }).nonce;
      for (const secret of [nonce, String(whoami.pid), String(whoami.connectionId), (read.contents as Array<{ text: string }>)[0].text]) {
        expect(text).not.toContain(secret);
      }
    });

    it('a UI-associated result is sealed: sealedResultRefs under the host-minted function-call id resolves to the full result', async () => {
      const sealed = (await auditOperations(rpcPlane.http, view)).filter(({ record }) => record.functionCallId !== null);
      expect(sealed.map(({ record }) => [record.tool, record.replayed])).toEqual([['start-session', false]]);
      const [{ event, record }] = sealed;
      const functionCallId = record.functionCallId as string;
      const ref = event.sealedResultRefs?.[functionCallId];
      expect(ref).toMatchObject({ recordId: expect.any(String), schemaVersion: expect.any(Number) });
      const resolved = await rpcPlane.plane.sealed.client.request(SealedResolve, {
        key: {
          session: { tenant: 'acme', appName: 'audit', userId: 'alice', sessionId: 's-audit' },
          incarnation: view.incarnation,
          eventId: String(event.id),
          functionCallId,
          recordId: String(ref?.recordId),
        },
      });
      expect((resolved as { envelope: { result: unknown } }).envelope.result).toEqual(minted);
    });

    it('model-facing reads leave app audit events out; ?audience=all has them', async () => {
      const model = await sessionEvents(rpcPlane.http, view, 'model');
      expect(model.status).toBe(200);
      expect(model.events.filter((e) => e.audience === 'app_audit')).toEqual([]);
      expect(model.events.length).toBeGreaterThanOrEqual(1); // the model's own tool batch
      const all = await sessionEvents(rpcPlane.http, view, 'all');
      expect(all.events.filter((e) => e.audience === 'app_audit').length).toBeGreaterThanOrEqual(6);
      expect(all.events.length).toBe(model.events.length + all.events.filter((e) => e.audience === 'app_audit').length);
    });
  });

  it('a polling View is compacted per the profile’s retention: at most 5 operation records, one summary keeping counts and outcomes', async () => {
    const view = await openView(rpcPlane.http, alice, { appName: 'polling', sessionId: 's-poll', tool: 'start-session' });
    const polls = 20;
    for (let i = 0; i < polls; i++) expect(structuredOf(await rpc().call(view, 'echo', { text: `poll ${i}` }))).toEqual({ text: `poll ${i}` });
    expect(rpcErrorOf(await rpc().call(view, 'model-only')).data).toMatchObject({ reason: 'TOOL_NOT_APP_VISIBLE' });
    const settled = await eventually(async () => {
      const audit = await auditOf(rpcPlane.http, view);
      const operations = audit.filter(({ record }) => record.kind === 'operation');
      const summaries = audit.flatMap(({ record }) => (record.kind === 'summary' ? [record] : []));
      return operations.length <= 5 && summaries.length === 1 && summaries[0].count + operations.length === polls + 1 ? { operations, summaries } : undefined;
    }, 15_000);
    const [summary] = settled.summaries;
    const kept = settled.operations.map(({ record }) => record);
    const keptOk = kept.filter((r) => r.kind === 'operation' && r.outcome === 'ok').length;
    expect(summary.byOutcome.ok + keptOk).toBe(polls);
    expect((summary.byOutcome.PERMISSION_DENIED ?? 0) + kept.filter((r) => r.kind === 'operation' && r.outcome === 'PERMISSION_DENIED').length).toBe(1);
    expect((summary.byDecision.executed ?? 0) + kept.filter((r) => r.kind === 'operation' && r.decision === 'executed').length).toBe(polls);
    // The newest records are the ones kept.
    expect(kept.at(-1)).toMatchObject({ tool: 'model-only', decision: 'denied' });
    expect(executed(`${log}.polling`, 'echo')).toBe(polls);
  });
});
