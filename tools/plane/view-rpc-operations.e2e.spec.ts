import fs from 'node:fs';
import { STATEFUL_NONCE_DOCS, STATEFUL_NONCE_OUT_OF_POLICY_URI, STATEFUL_NONCE_RESOURCE, eventually } from '@apphost/testing';
import { fixtureSpec } from './catalog-harness';
import { callsFile, executed, openView, resultOf, rpcErrorOf, startRpcPlane, structuredOf, type LiveView, type RpcPlane } from './view-rpc-harness';
import { viewProfile } from './views-harness';

/**
 * What a View operation does once admitted, end to end on the stateful-nonce fixture over stdio: the live JSON-RPC
 * id scope, MRTR on the app-safe class (state-only rounds continue, an input request fails closed, round and time
 * caps), `resources/read` under the resource policy on the request and on every returned item, and cancellation.
 * Budget: ~35 s to boot and bind, ~45 s of tests (one 8 MiB read).
 */
jest.setTimeout(150_000);

const docs = (path: string) => `${STATEFUL_NONCE_DOCS}${path}`;
const MAX_ITEM_BYTES = 64 * 1024;

describe('View RPC operations in the plane', () => {
  let rpcPlane: RpcPlane;
  let alice: string;
  const calls: Record<'ops' | 'mrtr' | 'reads' | 'roomy', string> = { ops: '', mrtr: '', reads: '', roomy: '' };
  const rpc = () => rpcPlane.rpc;

  beforeAll(async () => {
    const prefix = `rpc-ops-${process.pid}`;
    for (const name of Object.keys(calls) as Array<keyof typeof calls>) calls[name] = callsFile(prefix, name);
    const base = viewProfile();
    rpcPlane = await startRpcPlane({
      apps: { ops: ['ops'], mrtr: ['mrtr'], reads: ['reads'], roomy: ['roomy'] },
      profiles: {
        p1: base,
        // MRTR: two rounds, 4 s in all (room for a loaded machine, short enough to wait out).
        'p-mrtr': { ...base, limits: { ...base.limits, mrtr: { maxRounds: 2, maxTotalMs: 4000 } } },
        // The View document and the docs/ subtree only; items of at most 64 KiB.
        'p-reads': {
          ...base,
          resourcePolicy: {
            revision: 'docs',
            entries: [
              { match: 'exact', uri: STATEFUL_NONCE_RESOURCE },
              { match: 'prefix', uri: STATEFUL_NONCE_DOCS },
            ],
          },
          views: { maxDocumentBytes: MAX_ITEM_BYTES },
        },
        // The fixture's own prefix, the default 8 MiB items: only the read's 8 MiB total binds.
        'p-roomy': { ...base, resourcePolicy: { revision: 'nonce', entries: [{ match: 'prefix', uri: 'ui://stateful-nonce/' }] } },
      },
      toolsets: {
        ops: fixtureSpec('stateful-nonce', 'p1', [`--calls-file=${calls.ops}`]),
        // MRTR needs a 2026-07-28 connection: a 2025-era server loops its own rounds within one request.
        mrtr: { ...fixtureSpec('stateful-nonce', 'p-mrtr', [`--calls-file=${calls.mrtr}`]), protocol: '2026-07-28' },
        reads: fixtureSpec('stateful-nonce', 'p-reads', [`--calls-file=${calls.reads}`]),
        roomy: fixtureSpec('stateful-nonce', 'p-roomy', [`--calls-file=${calls.roomy}`]),
      },
    });
    alice = await rpcPlane.bearer('alice');
  }, 120_000);

  afterAll(async () => {
    await rpcPlane?.stop();
    for (const file of Object.values(calls)) fs.rmSync(file, { force: true });
  });

  const live = (appName: string, sessionId: string) => openView(rpcPlane.http, alice, { appName, sessionId, tool: 'start-session' });

  describe('live JSON-RPC ids', () => {
    it('an equal id while the first is live is -32600 RPC_ID_IN_USE; another View may use it; reuse after completion is legal', async () => {
      const [view, other] = await Promise.all([live('ops', 's-ids-1'), live('ops', 's-ids-2')]);
      const before = executed(calls.ops, 'slow');
      const first = rpc().call(view, 'slow', { ms: 1500 }, { id: 'same' });
      await eventually(async () => (executed(calls.ops, 'slow') > before ? true : undefined), 10_000, 25);
      const clash = await rpc().call(view, 'echo', { text: 'clash' }, { id: 'same' });
      expect(clash.body).toMatchObject({ jsonrpc: '2.0', id: 'same', error: { code: -32600, data: { code: 'INVALID_ARGUMENT', reason: 'RPC_ID_IN_USE' } } });
      expect(structuredOf(await rpc().call(other, 'echo', { text: 'other view' }, { id: 'same' }))).toEqual({ text: 'other view' });
      expect((await first).body).toMatchObject({ id: 'same', result: { structuredContent: { slept: 1500 } } });
      expect(structuredOf(await rpc().call(view, 'echo', { text: 'reused' }, { id: 'same' }))).toEqual({ text: 'reused' });
      expect(executed(calls.ops, 'echo')).toBe(2); // never the clashing one
    });

    it('numeric and string ids are answered as sent', async () => {
      const view = await live('ops', 's-ids-3');
      expect((await rpc().request(view, 'ping', {}, { id: 7 })).body).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
      expect((await rpc().request(view, 'ping', {}, { id: '7' })).body).toEqual({ jsonrpc: '2.0', id: '7', result: {} });
    });
  });

  describe('MRTR on the app-safe class', () => {
    let view: LiveView;
    beforeAll(async () => {
      view = await live('mrtr', 's-mrtr');
    });

    it('state-only rounds continue: requestState echoed byte for byte, a fresh MCP request id per leg, one JSON-RPC answer', async () => {
      const report = structuredOf(await rpc().call(view, 'stepper', { rounds: 2 }));
      expect(report).toMatchObject({ rounds: 2, legs: 3, exact: [true, true], inputResponseKeys: [] });
      const ids = report.requestIds as unknown[];
      expect(new Set(ids.map(String)).size).toBe(3);
      expect(executed(calls.mrtr, 'stepper')).toBe(3);
    });

    it('a read carries the server’s cache hints; an idempotent read is retained only within its ttlMs (0: never)', async () => {
      const cached = `${STATEFUL_NONCE_DOCS}cached`;
      const first = await rpc().read(view, cached, { key: 'read-cached' });
      expect(first.body.result).toMatchObject({ ttlMs: 60_000, cacheScope: 'private' });
      const reads = executed(calls.mrtr, cached, 'resources/read');
      expect((await rpc().read(view, cached, { key: 'read-cached' })).body.result).toEqual(first.body.result);
      expect(executed(calls.mrtr, cached, 'resources/read')).toBe(reads); // retained: not read again

      const plain = `${STATEFUL_NONCE_DOCS}readme.txt`;
      const once = await rpc().read(view, plain, { key: 'read-plain' });
      expect(once.body.result).toMatchObject({ ttlMs: 0 });
      const before = executed(calls.mrtr, plain, 'resources/read');
      await rpc().read(view, plain, { key: 'read-plain' });
      expect(executed(calls.mrtr, plain, 'resources/read')).toBe(before + 1); // ttlMs 0: read again
    });

    it('a round that requests input fails closed: INPUT_REQUIRED_DENIED, no second leg', async () => {
      const refused = rpcErrorOf(await rpc().call(view, 'ask', { question: 'Proceed?' }));
      expect(refused.data).toMatchObject({ reason: 'INPUT_REQUIRED_DENIED' });
      expect(executed(calls.mrtr, 'ask')).toBe(1);
    });

    it('more rounds than the profile allows: INPUT_REQUIRED_ROUNDS_EXCEEDED after the cap', async () => {
      const before = executed(calls.mrtr, 'stepper');
      const refused = rpcErrorOf(await rpc().call(view, 'stepper', { rounds: 5 }));
      expect(refused.data).toMatchObject({ reason: 'INPUT_REQUIRED_ROUNDS_EXCEEDED' });
      // The first leg and one leg per allowed round ran; nothing after the cap.
      expect(executed(calls.mrtr, 'stepper') - before).toBe(3);
    });

    it('the time cap passing under a later leg: that leg is cancelled, INPUT_REQUIRED_TIME_EXCEEDED, no leg after it', async () => {
      const whoami = async () => structuredOf(await rpc().call(view, 'whoami')) as { stepperLegs: number; cancellations: number };
      const before = await whoami();
      const refused = rpcErrorOf(await rpc().call(view, 'stepper', { rounds: 2, delayMs: 20_000, delayLeg: 2 }));
      expect(refused.data).toMatchObject({ code: 'OUTCOME_UNKNOWN', reason: 'INPUT_REQUIRED_TIME_EXCEEDED' });
      await eventually(async () => ((await whoami()).cancellations === before.cancellations + 1 ? true : undefined), 10_000, 100);
      expect((await whoami()).stepperLegs).toBe(before.stepperLegs + 2);
    });
  });

  describe('resources/read under the resource policy', () => {
    let view: LiveView;
    const reads = (uri: string) => executed(calls.reads, uri, 'resources/read');
    beforeAll(async () => {
      view = await live('reads', 's-reads');
    });

    it('in policy: the View document and prefix-bounded subresources read with canonical URIs', async () => {
      expect(resultOf(await rpc().read(view, STATEFUL_NONCE_RESOURCE)).contents).toEqual([expect.objectContaining({ uri: STATEFUL_NONCE_RESOURCE })]);
      const nested = resultOf(await rpc().read(view, docs('guide/intro.md'))).contents as Array<Record<string, unknown>>;
      expect(nested).toEqual([{ uri: docs('guide/intro.md'), mimeType: 'text/markdown', text: '# Intro\n\nA nested sub-resource.' }]);
      // Percent-encoded unreserved characters are canonicalized before the policy and the read.
      expect(resultOf(await rpc().read(view, docs('%72eadme.txt'))).contents).toEqual([expect.objectContaining({ uri: docs('readme.txt') })]);
    });

    it.each([
      ['outside every entry', 'ui://elsewhere/evil.html'],
      ['the string prefix but not the path segment', 'ui://stateful-nonce/docs-archive/old.txt'],
    ])('out-of-policy request (%s): RESOURCE_POLICY_DENIED, nothing read', async (_, uri) => {
      const refused = rpcErrorOf(await rpc().read(view, uri));
      expect(refused).toMatchObject({ code: -32003, data: { code: 'PERMISSION_DENIED', reason: 'RESOURCE_POLICY_DENIED' } });
      expect(reads(uri)).toBe(0);
    });

    it.each([
      ['dot segments escaping the prefix', docs('../docs-archive/old.txt')],
      ['a scheme the policy cannot canonicalize', STATEFUL_NONCE_OUT_OF_POLICY_URI],
    ])('a URI that does not canonicalize (%s) is refused before any read', async (_, uri) => {
      const refused = rpcErrorOf(await rpc().read(view, uri));
      expect(['RESOURCE_POLICY_DENIED', 'RPC_INVALID_PARAMS']).toContain(refused.data.reason);
      expect(reads(uri) + reads('ui://stateful-nonce/docs-archive/old.txt')).toBe(0);
    });

    it('an extra out-of-policy item rejects the whole response: no byte of either item is delivered', async () => {
      const reply = await rpc().read(view, docs('with-extra'));
      expect(rpcErrorOf(reply).data).toMatchObject({ code: 'PERMISSION_DENIED', reason: 'RESOURCE_POLICY_DENIED' });
      expect(reply.text).not.toContain('root:x');
      expect(reply.text).not.toContain('allowed');
      expect(reads(docs('with-extra'))).toBe(1);
    });

    it('duplicate items and mixed text/blob items within the policy are delivered as the server sent them', async () => {
      expect(resultOf(await rpc().read(view, docs('duplicate'))).contents).toEqual([
        { uri: docs('duplicate'), mimeType: 'text/plain', text: 'first' },
        { uri: docs('duplicate'), mimeType: 'text/plain', text: 'second' },
      ]);
      expect(resultOf(await rpc().read(view, docs('mixed'))).contents).toEqual([
        { uri: docs('mixed/text'), mimeType: 'text/plain', text: 'text part' },
        { uri: docs('mixed/blob'), mimeType: 'application/octet-stream', blob: Buffer.from([0, 1, 2, 254, 255]).toString('base64') },
      ]);
    });

    it('a scheme-wide entry (`ui://`) allows every returned item under the scheme, not only the requested URI', async () => {
      const wide = await live('ops', 's-wide'); // the default profile: one `ui://` prefix entry
      expect(resultOf(await rpc().read(wide, docs('mixed'))).contents).toHaveLength(2);
    });

    it('an item over the per-item limit (the profile’s document limit) is PAYLOAD_TOO_LARGE READ_ITEM_TOO_LARGE', async () => {
      const item = rpcErrorOf(await rpc().read(view, docs(`big/${MAX_ITEM_BYTES + 1}`)));
      expect(item.data).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', reason: 'READ_ITEM_TOO_LARGE' });
      expect(resultOf(await rpc().read(view, docs(`big/${MAX_ITEM_BYTES}`))).contents).toHaveLength(1);
      expect(resultOf(await rpc().read(view, docs(`chunks/64/${MAX_ITEM_BYTES}`))).contents).toHaveLength(64);
    });

    it('items each within the limit whose sum is over the 8 MiB read cap: PAYLOAD_TOO_LARGE READ_TOTAL_TOO_LARGE', async () => {
      const roomy = await live('roomy', 's-aggregate'); // items up to 8 MiB
      const total = rpcErrorOf(await rpc().read(roomy, docs(`chunks/64/${132 * 1024}`)));
      expect(total.data).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', reason: 'READ_TOTAL_TOO_LARGE' });
    });
  });

  describe('large results', () => {
    it('a 3 MiB tools/call result and a 5 MiB read cross the bus in chunks and arrive intact', async () => {
      const view = await live('roomy', 's-large');
      const padBytes = 3 * 1024 * 1024;
      const called = structuredOf(await rpc().call(view, 'start-session', { label: 'large', padBytes }));
      expect((called.pad as string).length).toBe(padBytes);
      expect(called.pad).toBe('p'.repeat(padBytes));
      const bytes = 5 * 1024 * 1024;
      const [item] = resultOf(await rpc().read(view, docs(`big/${bytes}`))).contents as Array<{ text: string }>;
      expect(item.text).toBe('b'.repeat(bytes));
    });
  });

  describe('cancellation', () => {
    it('notifications/cancelled for a live id: 202; the pending POST answers 204 with no body; the server saw the cancel', async () => {
      const view = await live('ops', 's-cancel');
      const whoami = async () => structuredOf(await rpc().call(view, 'whoami')) as { slowStarted: number; cancellations: number };
      const before = await whoami();
      const pending = rpc().call(view, 'slow', { ms: 20_000, steps: 100 }, { id: 'to-cancel' });
      await eventually(async () => ((await whoami()).slowStarted > before.slowStarted ? true : undefined), 10_000, 50);
      const sent = performance.now();
      const cancel = await rpc().cancel(view, 'to-cancel');
      expect({ status: cancel.status, text: cancel.text }).toEqual({ status: 202, text: '' });
      const answered = await pending;
      expect({ status: answered.status, text: answered.text }).toEqual({ status: 204, text: '' });
      expect(performance.now() - sent).toBeLessThan(10_000);
      await eventually(async () => ((await whoami()).cancellations === before.cancellations + 1 ? true : undefined), 10_000, 50);
      // The id is free again, and a cancel of an id nothing holds is ignored (202).
      expect(structuredOf(await rpc().call(view, 'echo', { text: 'after' }, { id: 'to-cancel' }))).toEqual({ text: 'after' });
      expect((await rpc().cancel(view, 'to-cancel')).status).toBe(202);
      expect((await whoami()).cancellations).toBe(before.cancellations + 1);
    });

    it('a cancel after the call completed changes nothing: the response stands', async () => {
      const view = await live('ops', 's-cancel-late');
      const done = await rpc().call(view, 'slow', { ms: 0 }, { id: 'late' });
      expect(resultOf(done).structuredContent).toMatchObject({ slept: 0 });
      expect((await rpc().cancel(view, 'late')).status).toBe(202);
      expect((structuredOf(await rpc().call(view, 'whoami')) as { cancellations: number }).cancellations).toBe(0);
    });
  });
});
