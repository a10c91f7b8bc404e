import type { RunToolBatchResponse } from '@apphost/contracts';
import { captureServiceLogs, dropSchemasWithPrefix, startFakeProviders, startPrivateNats, uniquePrefix, type PrivateNats } from '@apphost/testing';
import { fixtureSpec, token } from './catalog-harness';
import { bootViewPlane, putProfile, putToolset, sessionWithUiCall, uiCall, viewHttp, viewProfile, type HttpReply, type ViewPlane } from './views-harness';

/**
 * What ends a View, end to end on the real plane (stateful-nonce fixture over stdio, private NATS, real PostgreSQL
 * and Redis): session deletion and re-creation, toolset revoke and rebind, principal revocation, and who may open a
 * View at all — a delegating runtime's user through a view token, never another session.
 * Budget: ~30 s to boot and bind, ~50 s of tests (2 busy cores).
 */
jest.setTimeout(150_000);

describe('View revocation and delegation in the plane', () => {
  const prefix = uniquePrefix();
  const logs = captureServiceLogs('debug');
  const grants: string[] = [];
  let nats: PrivateNats;
  let providers: { stop(): Promise<void> };
  let plane: ViewPlane;
  let http: ReturnType<typeof viewHttp>;
  let alice: string;
  let admin: string;

  const open = async (
    bearer: string,
    appName: string,
    sessionId: string,
    ev: RunToolBatchResponse,
    extra: Record<string, unknown> = {},
  ): Promise<HttpReply> => {
    const res = await http('POST', '/v1/views', { bearer, body: { appName, sessionId, eventId: ev.eventId, functionCallId: 'call-1', ...extra } });
    if (typeof res.body.grant === 'string') grants.push(res.body.grant);
    return res;
  };
  const getView = (bearer: string, viewId: string) => http('GET', `/v1/views/${viewId}`, { bearer });
  const renew = (bearer: string, viewId: string, grant: string) =>
    http('POST', `/v1/views/${viewId}:renew`, { bearer, headers: { 'x-apphost-view-grant': grant } });
  /** A live View of a fresh session's start-session call. */
  const liveView = async (appName: string, sessionId: string, bearer = alice) => {
    const ev = await sessionWithUiCall(http, bearer, { appName, sessionId, tool: 'start-session' });
    const opened = await open(bearer, appName, sessionId, ev);
    expect(opened.status).toBe(201);
    return { ev, viewId: opened.body.viewId as string, grant: opened.body.grant as string };
  };

  beforeAll(async () => {
    nats = await startPrivateNats();
    providers = await startFakeProviders(nats.url, ['export-audit']);
    plane = await bootViewPlane(nats.url, prefix, { life: ['life'], rev: ['rev'], reb: ['reb'], who: ['who'] });
    http = viewHttp(plane);
    alice = await token('alice', 'runtime view');
    admin = await token('root', 'admin');
    await putProfile(plane, 'p1', viewProfile());
    const states = await Promise.all(['life', 'rev', 'reb', 'who'].map((id) => putToolset(plane, id, fixtureSpec('stateful-nonce', 'p1'))));
    expect(states).toEqual(['PROFILE_BOUND', 'PROFILE_BOUND', 'PROFILE_BOUND', 'PROFILE_BOUND']);
  }, 120_000);

  afterAll(async () => {
    logs.stop();
    await plane?.stop();
    await providers?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  it('a deleted session revokes its Views; after re-creation the old widget is 404 and the old View stays dead', async () => {
    const { ev, viewId, grant } = await liveView('life', 'r-life');
    expect((await getView(alice, viewId)).body).toMatchObject({ state: 'ACTIVE', incarnation: 1 });

    const deleted = await http('DELETE', '/v1/sessions/r-life?appName=life', { bearer: alice });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ state: 'DELETED' });
    // The cascade revoked it, released its reference, then purged its record: it reads as absent, and its grant is dead.
    expect((await getView(alice, viewId)).status).toBe(404);
    expect((await renew(alice, viewId, grant)).status).toBe(404);

    const recreated = await http('POST', '/v1/sessions', { bearer: alice, body: { appName: 'life', sessionId: 'r-life' } });
    expect(recreated.status).toBe(201);
    expect(recreated.body).toMatchObject({ incarnation: 2 });
    expect((await open(alice, 'life', 'r-life', ev)).status).toBe(404);
    expect((await getView(alice, viewId)).status).toBe(404);
    // The new incarnation renders its own widgets.
    const fresh = await uiCall(http, alice, { appName: 'life', sessionId: 'r-life', tool: 'start-session', invocationId: 'inv-2' });
    const reopened = await open(alice, 'life', 'r-life', fresh);
    expect(reopened.status).toBe(201);
    expect(reopened.body.viewId).not.toBe(viewId);
  });

  it('toolset :revoke revokes its Views (TOOLSET_REVOKED): GET says so, renew is VIEW_REVOKED, a new bootstrap is the placeholder', async () => {
    const { ev, viewId, grant } = await liveView('rev', 'r-rev');
    const revoked = await http('POST', '/v1/toolsets/rev:revoke', { bearer: admin });
    expect(revoked.status).toBe(200);
    expect((await getView(alice, viewId)).body).toMatchObject({ state: 'REVOKED', reason: 'TOOLSET_REVOKED' });
    const refused = await renew(alice, viewId, grant);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'VIEW_REVOKED', revocation: 'TOOLSET_REVOKED' } });
    const again = await open(alice, 'rev', 'r-rev', ev);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ mode: 'placeholder', reason: 'TOOLSET_REVOKED' });
    expect(again.body).not.toHaveProperty('grant');
    // Closing a revoked View is still 204.
    expect((await http('DELETE', `/v1/views/${viewId}`, { bearer: alice })).status).toBe(204);
  });

  it('toolset :rebind revokes the Views of the old binding (TOOLSET_REBOUND)', async () => {
    const { viewId, grant } = await liveView('reb', 'r-reb');
    const rebound = await http('POST', '/v1/toolsets/reb:rebind', { bearer: admin });
    expect(rebound.status).toBe(200);
    expect(rebound.body).toMatchObject({ state: 'PROFILE_BOUND', bindingGeneration: 2 });
    expect((await getView(alice, viewId)).body).toMatchObject({ state: 'REVOKED', reason: 'TOOLSET_REBOUND' });
    expect((await renew(alice, viewId, grant)).body.error).toMatchObject({ details: { reason: 'VIEW_REVOKED', revocation: 'TOOLSET_REBOUND' } });
  });

  it('a revoked principal can neither open nor renew (403 PRINCIPAL_REVOKED); restored, it opens again', async () => {
    const carol = await token('carol', 'runtime view');
    const { ev, viewId, grant } = await liveView('who', 'r-carol', carol);
    const revoke = await http('POST', '/v1/principals:revoke', { bearer: admin, body: { tenant: 'acme', subject: 'carol' } });
    expect(revoke.status).toBe(200);
    expect(revoke.body).toMatchObject({ revoked: true, changed: true });

    const renewRefused = await renew(carol, viewId, grant);
    expect(renewRefused.status).toBe(403);
    expect(renewRefused.body.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'PRINCIPAL_REVOKED' } });
    const openRefused = await open(carol, 'who', 'r-carol', ev);
    expect(openRefused.status).toBe(403);
    expect(openRefused.body.error).toMatchObject({ details: { reason: 'PRINCIPAL_REVOKED' } });
    expect((await getView(carol, viewId)).body).toMatchObject({ state: 'REVOKED', reason: 'PRINCIPAL_REVOKED' });

    expect((await http('POST', '/v1/principals:restore', { bearer: admin, body: { tenant: 'acme', subject: 'carol' } })).body).toMatchObject({
      revoked: false,
    });
    expect((await open(carol, 'who', 'r-carol', ev)).status).toBe(201);
  });

  it("delegation: a delegate runtime's user opens the View with a view token of that session; the token reaches no other session", async () => {
    const runtime = await token('svc-runtime', 'runtime delegate');
    const asDana = { userId: 'dana' };
    const ev = await sessionWithUiCall(http, runtime, { appName: 'who', sessionId: 'r-dana', tool: 'start-session', ...asDana });
    await sessionWithUiCall(http, runtime, { appName: 'who', sessionId: 'r-dana-2', tool: 'start-session', ...asDana });
    const minted = await http('POST', '/v1/sessions/r-dana/view-tokens', { bearer: runtime, body: { appName: 'who', userId: 'dana' } });
    expect(minted.status).toBe(201);
    expect(minted.body).toMatchObject({ scope: 'view', sessionId: 'r-dana', appName: 'who' });
    const browser = minted.body.token as string;

    const opened = await open(browser, 'who', 'r-dana', ev);
    expect(opened.status).toBe(201);
    expect(opened.body.widget).toMatchObject({ eventId: ev.eventId, toolsetId: 'who' });
    const viewId = opened.body.viewId as string;
    expect((await getView(browser, viewId)).body).toMatchObject({ state: 'ACTIVE', session: { tenant: 'acme', userId: 'dana', sessionId: 'r-dana' } });
    expect((await renew(browser, viewId, opened.body.grant)).status).toBe(200);

    // Another session of the same user, or naming another user: absent. Runtime routes: not its scope.
    const other = await sessionWithUiCall(http, runtime, { appName: 'who', sessionId: 'r-dana-3', tool: 'start-session', ...asDana });
    expect((await open(browser, 'who', 'r-dana-3', other)).status).toBe(404);
    expect((await open(browser, 'who', 'r-dana', ev, { userId: 'svc-runtime' })).status).toBe(404);
    expect((await http('POST', '/v1/sessions/r-dana/tool-batches', { bearer: browser, body: { appName: 'who', invocationId: 'x', calls: [] } })).status).toBe(
      403,
    );
    // The runtime itself, without scope view, cannot open Views; and another user's token sees nothing of dana's.
    expect((await open(runtime, 'who', 'r-dana', ev, asDana)).status).toBe(403);
    expect((await getView(alice, viewId)).status).toBe(404);
    expect((await http('DELETE', `/v1/views/${viewId}`, { bearer: browser })).status).toBe(204);
  });

  it('a view token minted before its session was deleted and created again opens nothing in the new incarnation', async () => {
    const runtime = await token('svc-runtime', 'runtime delegate');
    const asErin = { userId: 'erin' };
    const first = await sessionWithUiCall(http, runtime, { appName: 'who', sessionId: 'r-erin', tool: 'start-session', ...asErin });
    const minted = await http('POST', '/v1/sessions/r-erin/view-tokens', { bearer: runtime, body: { appName: 'who', userId: 'erin' } });
    expect(minted.status).toBe(201);
    const before = minted.body.token as string;
    const opened = await open(before, 'who', 'r-erin', first);
    expect(opened.status).toBe(201);

    expect((await http('DELETE', '/v1/sessions/r-erin?appName=who&userId=erin', { bearer: runtime })).status).toBe(200);
    const again = await sessionWithUiCall(http, runtime, { appName: 'who', sessionId: 'r-erin', tool: 'start-session', ...asErin });
    // The same session id, a new incarnation: the old token sees neither the new widget nor its old View.
    expect((await open(before, 'who', 'r-erin', again)).status).toBe(404);
    expect((await getView(before, opened.body.viewId as string)).status).toBe(404);
    const fresh = await http('POST', '/v1/sessions/r-erin/view-tokens', { bearer: runtime, body: { appName: 'who', userId: 'erin' } });
    expect((await open(fresh.body.token as string, 'who', 'r-erin', again)).status).toBe(201);
  });

  it('no grant reaches a service log line', () => {
    expect(grants.length).toBeGreaterThanOrEqual(6);
    const logText = logs.lines.map((line) => JSON.stringify(line)).join('\n');
    for (const grant of grants) expect(logText).not.toContain(grant);
  });
});
