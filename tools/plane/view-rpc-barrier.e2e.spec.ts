import fs from 'node:fs';
import { STATEFUL_NONCE_RESOURCE, sleep } from '@apphost/testing';
import { fixtureSpec, matrixSpec } from './catalog-harness';
import { callsFile, executed, isDenial, openView, resultOf, rpcErrorOf, startRpcPlane, structuredOf, type LiveView, type RpcPlane } from './view-rpc-harness';
import { viewProfile, type HttpReply } from './views-harness';

/**
 * The post-queue barrier and idempotency of the View RPC, end to end (binding-registry as its own process, so the
 * last test can kill the connection owner). Each revocation is tried both ways: it wins (the call comes after it:
 * denied, nothing ran) and it races calls already in flight (every call either ran and answered, or was denied and
 * never ran: counted at the fixture). Idempotent outcomes are delivered only through a fresh barrier.
 * Budget: ~40 s to boot and bind, ~60 s of tests.
 */
jest.setTimeout(180_000);

/** The reason a refusal carries: the JSON-RPC `error.data.reason`, the HTTP envelope's `details.reason`, or the bare status. */
function refusalOf(reply: HttpReply): string {
  if (reply.status === 200 && reply.body.error) return String(reply.body.error.data?.reason);
  if (reply.status >= 400) return String(reply.body.error?.details?.reason ?? `HTTP_${reply.status}`);
  throw new Error(`expected a refusal, got ${reply.status} ${reply.text.slice(0, 300)}`);
}

const SCENARIOS = ['teardown', 'accept', 'hostpage', 'session', 'rebind', 'principal', 'idem', 'replay', 'conn'] as const;

describe('View RPC barrier and idempotency in the plane', () => {
  let rpcPlane: RpcPlane;
  let alice: string;
  let admin: string;
  const calls: Record<string, string> = {};
  let driftState: string;
  const rpc = () => rpcPlane.rpc;

  /**
   * Fires `count` slow calls a little apart and `trigger` among them. Whatever the order turned out to be, a denied
   * call never ran and every answered call did: ok ≤ ran ≤ count − denied at the fixture.
   */
  const race = async (view: LiveView, log: string, trigger: () => Promise<unknown>, count = 6) => {
    const before = executed(log, 'slow');
    const inFlight = Array.from({ length: count }, (_, i) => sleep(i * 60).then(() => rpc().call(view, 'slow', { ms: 250 })));
    await sleep(150);
    await trigger();
    const replies = await Promise.all(inFlight);
    const ok = replies.filter((r) => r.status === 200 && r.body.result && !r.body.result.isError).length;
    const denied = replies.filter(isDenial).length;
    const ran = executed(log, 'slow') - before;
    expect({ ok: ok <= ran, notDenied: ran <= count - denied }).toEqual({ ok: true, notDenied: true });
    return { ok, denied, ran };
  };

  beforeAll(async () => {
    const prefix = `rpc-barrier-${process.pid}`;
    for (const name of SCENARIOS) calls[name] = callsFile(prefix, name);
    calls.drift = callsFile(prefix, 'drift');
    calls.short = callsFile(prefix, 'short');
    driftState = callsFile(prefix, 'drift-state');
    fs.writeFileSync(driftState, '0');
    const base = viewProfile();
    const nonce = (name: string, profileId = 'p1') => fixtureSpec('stateful-nonce', profileId, [`--calls-file=${calls[name]}`]);
    rpcPlane = await startRpcPlane({
      apps: { ...Object.fromEntries(SCENARIOS.map((name) => [name, [name]])), drift: ['drift'], short: ['short'] },
      profiles: {
        p1: base,
        'p-accept': { ...base, callbackPolicy: { ...base.callbackPolicy, requestTeardown: 'accept' } },
        'p-short': { ...base, idempotency: { retentionMs: 4000 } },
      },
      toolsets: {
        ...Object.fromEntries(SCENARIOS.map((name) => [name, nonce(name, name === 'accept' ? 'p-accept' : 'p1')])),
        short: fixtureSpec('stateful-nonce', 'p-short', [`--calls-file=${calls.short}`]),
        drift: matrixSpec('p1', [`--state-file=${driftState}`, `--calls-file=${calls.drift}`]),
      },
      registryProcess: true,
    });
    alice = await rpcPlane.bearer('alice');
    admin = await rpcPlane.bearer('root', { admin: true });
  }, 150_000);

  afterAll(async () => {
    await rpcPlane?.stop();
    for (const file of [...Object.values(calls), driftState]) fs.rmSync(file, { force: true });
  });

  const live = (appName: string, sessionId: string, bearer = alice) => openView(rpcPlane.http, bearer, { appName, sessionId, tool: 'start-session' });

  describe('barrier races', () => {
    it('teardown (the host page’s DELETE): a queued call loses or finds the View gone; afterwards every call is refused, nothing runs', async () => {
      const view = await live('teardown', 's-td');
      expect(resultOf(await rpc().call(view, 'slow', { ms: 0 }))).toBeDefined();
      await race(view, calls.teardown, () => rpcPlane.http('DELETE', `/v1/views/${view.viewId}`, { bearer: alice }));
      const before = executed(calls.teardown, 'slow');
      expect(['VIEW_REVOKED', 'VIEW_GRANT_INVALID', 'HTTP_404']).toContain(refusalOf(await rpc().call(view, 'slow', { ms: 0 })));
      expect(executed(calls.teardown, 'slow')).toBe(before);
    });

    it('ui/notifications/request-teardown: under `accept` it tears the View down; under `host-page` it is only recorded', async () => {
      const accepted = await live('accept', 's-acc');
      expect((await rpc().notify(accepted, 'ui/notifications/request-teardown')).status).toBe(202);
      const before = executed(calls.accept, 'whoami');
      expect(['VIEW_REVOKED', 'VIEW_GRANT_INVALID', 'HTTP_404']).toContain(refusalOf(await rpc().call(accepted, 'whoami')));
      expect(executed(calls.accept, 'whoami')).toBe(before);

      const recorded = await live('hostpage', 's-hp');
      expect((await rpc().notify(recorded, 'ui/notifications/request-teardown')).status).toBe(202);
      // Malformed and duplicate requests are ignored (202, logged), never phase 1 by themselves.
      expect((await rpc().notify(recorded, 'ui/notifications/request-teardown', { unexpected: true })).status).toBe(202);
      expect((await rpc().notify(recorded, 'ui/notifications/request-teardown')).status).toBe(202);
      expect(structuredOf(await rpc().call(recorded, 'whoami'))).toMatchObject({ nonce: recorded.toolResult.structuredContent.nonce });
      expect((await rpcPlane.http('GET', `/v1/views/${recorded.viewId}`, { bearer: alice })).body).toMatchObject({ state: 'ACTIVE' });
    });

    it('session delete: calls in flight either ran or were refused; after the delete the View is gone and nothing runs', async () => {
      const view = await live('session', 's-del');
      await race(view, calls.session, () => rpcPlane.http('DELETE', '/v1/sessions/s-del?appName=session', { bearer: alice }));
      const before = executed(calls.session, 'slow');
      expect(['HTTP_404', 'VIEW_REVOKED', 'SESSION_NOT_ACTIVE']).toContain(refusalOf(await rpc().call(view, 'slow', { ms: 0 })));
      expect(executed(calls.session, 'slow')).toBe(before);
    });

    it('rebind: the old binding’s View is refused (VIEW_REVOKED), nothing runs on either binding', async () => {
      const view = await live('rebind', 's-reb');
      await race(view, calls.rebind, () => rpcPlane.http('POST', '/v1/toolsets/rebind:rebind', { bearer: admin }));
      const before = executed(calls.rebind, 'slow');
      const refused = await rpc().call(view, 'slow', { ms: 0 });
      expect(refusalOf(refused)).toBe('VIEW_REVOKED');
      // The View ends when its generation closes under the rebind: while the binding is between generations it reads
      // as revoked, after as rebound; either way the cause, never GENERATION_GONE.
      expect(rpcErrorOf(refused).data).toMatchObject({ code: 'FAILED_PRECONDITION' });
      expect(['TOOLSET_REBOUND', 'TOOLSET_REVOKED']).toContain(rpcErrorOf(refused).data['revocation']);
      expect(executed(calls.rebind, 'slow')).toBe(before);
    });

    it('principal revoke: refused with PRINCIPAL_REVOKED, nothing runs; restored, a new View calls again', async () => {
      const carol = await rpcPlane.bearer('carol');
      const view = await live('principal', 's-carol', carol);
      const revoke = () => rpcPlane.http('POST', '/v1/principals:revoke', { bearer: admin, body: { tenant: 'acme', subject: 'carol' } });
      await race(view, calls.principal, revoke);
      const before = executed(calls.principal, 'slow');
      expect(refusalOf(await rpc().call(view, 'slow', { ms: 0 }))).toBe('PRINCIPAL_REVOKED');
      expect(executed(calls.principal, 'slow')).toBe(before);
      await rpcPlane.http('POST', '/v1/principals:restore', { bearer: admin, body: { tenant: 'acme', subject: 'carol' } });
      const again = await openView(rpcPlane.http, carol, { appName: 'principal', sessionId: 's-carol-2', tool: 'start-session' });
      expect(resultOf(await rpc().call(again, 'slow', { ms: 0 }))).toMatchObject({ structuredContent: { slept: 0 } });
    });

    it('visibility removal: calls before it ran, calls after it are TOOL_NOT_APP_VISIBLE and never run', async () => {
      const view = await openView(rpcPlane.http, alice, { appName: 'drift', sessionId: 's-drift', tool: 'vis-both' });
      const fire = () => Promise.all(Array.from({ length: 4 }, (_, i) => sleep(i * 30).then(() => rpc().call(view, 'vis-app'))));
      const first = await fire();
      expect(first.every((r) => r.status === 200 && r.body.result)).toBe(true);
      expect(executed(calls.drift, 'vis-app')).toBe(4);
      // Racing: flip the visibility while four more are in flight; each either ran (and answered) or was denied.
      const racing = fire();
      await sleep(40);
      fs.writeFileSync(driftState, '1000');
      const raced = await racing;
      const ok = raced.filter((r) => r.status === 200 && r.body.result).length;
      const denied = raced.filter(isDenial).length;
      expect(ok + denied).toBe(4);
      expect(executed(calls.drift, 'vis-app')).toBe(4 + ok);
      const after = await rpc().call(view, 'vis-app');
      expect(rpcErrorOf(after).data).toMatchObject({ reason: 'TOOL_NOT_APP_VISIBLE' });
      expect(executed(calls.drift, 'vis-app')).toBe(4 + ok);
    });
  });

  describe('idempotency', () => {
    let view: LiveView;
    beforeAll(async () => {
      view = await live('idem', 's-idem');
    });

    it('a replay returns the one retained outcome; the tool ran once', async () => {
      const first = structuredOf(await rpc().call(view, 'start-session', { label: 'once' }, { key: 'k-replay' }));
      const again = structuredOf(await rpc().call(view, 'start-session', { label: 'once' }, { key: 'k-replay', id: 'another-id' }));
      expect(again).toEqual(first);
      expect(executed(calls.idem, 'start-session')).toBe(2); // the model's initial call, then this key once
    });

    it('concurrent duplicates join the first and execute once', async () => {
      const before = executed(calls.idem, 'start-session');
      const replies = await Promise.all(Array.from({ length: 6 }, () => rpc().call(view, 'start-session', { label: 'dup' }, { key: 'k-concurrent' })));
      const nonces = new Set(replies.map((r) => structuredOf(r).nonce));
      expect(nonces.size).toBe(1);
      expect(executed(calls.idem, 'start-session')).toBe(before + 1);
    });

    it('same key, other identity (arguments or method) is CONFLICT -32009; nothing runs for the second', async () => {
      expect(resultOf(await rpc().call(view, 'slow', { ms: 1 }, { key: 'k-identity' }))).toBeDefined();
      const before = executed(calls.idem, 'slow');
      const otherArgs = rpcErrorOf(await rpc().call(view, 'slow', { ms: 2 }, { key: 'k-identity' }));
      expect(otherArgs).toMatchObject({ code: -32009, data: { code: 'CONFLICT', reason: 'IDEMPOTENCY_KEY_CONFLICT' } });
      const otherTool = rpcErrorOf(await rpc().call(view, 'whoami', {}, { key: 'k-identity' }));
      expect(otherTool.data).toMatchObject({ reason: 'IDEMPOTENCY_KEY_CONFLICT' });
      const reads = executed(calls.idem, STATEFUL_NONCE_RESOURCE, 'resources/read');
      const otherMethod = rpcErrorOf(await rpc().read(view, STATEFUL_NONCE_RESOURCE, { key: 'k-identity' }));
      expect(otherMethod.data).toMatchObject({ code: 'CONFLICT', reason: 'IDEMPOTENCY_KEY_CONFLICT' });
      expect(executed(calls.idem, 'slow')).toBe(before);
      expect(executed(calls.idem, STATEFUL_NONCE_RESOURCE, 'resources/read')).toBe(reads);
    });

    it.each([['has spaces'], ['x'.repeat(129)], [''], ['ünïcode']])('a malformed key (%j) is -32602 IDEMPOTENCY_KEY_INVALID, nothing runs', async (key) => {
      const before = executed(calls.idem, 'slow');
      const refused = rpcErrorOf(await rpc().call(view, 'slow', { ms: 0 }, { key }));
      expect(refused).toMatchObject({ code: -32602, data: { code: 'INVALID_ARGUMENT', reason: 'IDEMPOTENCY_KEY_INVALID' } });
      expect(executed(calls.idem, 'slow')).toBe(before);
    });

    it('a read replays too: same key, same URI, one read at the server', async () => {
      const before = executed(calls.idem, STATEFUL_NONCE_RESOURCE, 'resources/read');
      const first = resultOf(await rpc().read(view, STATEFUL_NONCE_RESOURCE, { key: 'k-read' }));
      const again = resultOf(await rpc().read(view, STATEFUL_NONCE_RESOURCE, { key: 'k-read' }));
      expect(again).toEqual(first);
      expect(executed(calls.idem, STATEFUL_NONCE_RESOURCE, 'resources/read')).toBe(before + 1);
    });

    it('an expired key executes again (profile retention 4 s)', async () => {
      const short = await live('short', 's-short');
      const first = structuredOf(await rpc().call(short, 'start-session', {}, { key: 'k-expiring' }));
      expect(structuredOf(await rpc().call(short, 'start-session', {}, { key: 'k-expiring' }))).toEqual(first);
      await sleep(5000);
      const later = structuredOf(await rpc().call(short, 'start-session', {}, { key: 'k-expiring' }));
      expect(later.nonce).not.toBe(first.nonce);
      expect(executed(calls.short, 'start-session')).toBe(3); // initial, first use, after expiry
    });

    it('replay after teardown, toolset revocation or rebind is refused; nothing runs', async () => {
      const replayOnce = async (view: LiveView, key: string) => {
        expect(resultOf(await rpc().call(view, 'slow', { ms: 0 }, { key }))).toBeDefined();
        return executed(calls.replay, 'slow');
      };
      const tornDown = await live('replay', 's-rp-1');
      let ran = await replayOnce(tornDown, 'k-td');
      await rpcPlane.http('DELETE', `/v1/views/${tornDown.viewId}`, { bearer: alice });
      expect(['VIEW_REVOKED', 'VIEW_GRANT_INVALID', 'HTTP_404']).toContain(refusalOf(await rpc().call(tornDown, 'slow', { ms: 0 }, { key: 'k-td' })));
      expect(executed(calls.replay, 'slow')).toBe(ran);

      const rebound = await live('replay', 's-rp-2');
      ran = await replayOnce(rebound, 'k-rb');
      expect((await rpcPlane.http('POST', '/v1/toolsets/replay:rebind', { bearer: admin })).status).toBe(200);
      expect(refusalOf(await rpc().call(rebound, 'slow', { ms: 0 }, { key: 'k-rb' }))).toBe('VIEW_REVOKED');
      expect(executed(calls.replay, 'slow')).toBe(ran);

      const revoked = await live('replay', 's-rp-3');
      ran = await replayOnce(revoked, 'k-rv');
      expect((await rpcPlane.http('POST', '/v1/toolsets/replay:revoke', { bearer: admin })).status).toBe(200);
      const refused = await rpc().call(revoked, 'slow', { ms: 0 }, { key: 'k-rv' });
      expect(refusalOf(refused)).toBe('VIEW_REVOKED');
      expect(rpcErrorOf(refused).data).toMatchObject({ revocation: 'TOOLSET_REVOKED' });
      expect(executed(calls.replay, 'slow')).toBe(ran);
    });
  });

  // Last: it kills the one binding-registry every toolset of this plane lives on.
  describe('connection loss', () => {
    it('owner killed: the View gets a typed error, nothing runs; after the restart the replay of its key is refused too', async () => {
      const view = await live('conn', 's-conn');
      expect(resultOf(await rpc().call(view, 'slow', { ms: 0 }, { key: 'k-conn' }))).toBeDefined();
      const ran = executed(calls.conn, 'slow');
      const owner = rpcPlane.plane.registryProcess;
      if (!owner) throw new Error('the registry must run as its own process');
      await owner.kill();
      const whileDead = rpcErrorOf(await rpc().call(view, 'slow', { ms: 0 }));
      expect(['UNAVAILABLE', 'FAILED_PRECONDITION', 'DEADLINE_EXCEEDED']).toContain(whileDead.data.code);
      await owner.restart();
      // A new owner incarnation: the generation the View was bound to is gone, and so is every replay on it.
      const replay = await rpc().call(view, 'slow', { ms: 0 }, { key: 'k-conn' });
      expect(['VIEW_REVOKED', 'CONNECTION_GENERATION_GONE']).toContain(refusalOf(replay));
      expect(rpcErrorOf(replay).data.code).toBe('FAILED_PRECONDITION');
      expect(executed(calls.conn, 'slow')).toBe(ran);
    });
  });
});
