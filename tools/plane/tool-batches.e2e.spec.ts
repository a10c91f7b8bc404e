import {
  ConnCallTool,
  RegistryAcquireGeneration,
  RegistryPutProfile,
  RegistryPutToolset,
  SealedGc,
  SealedResolve,
  type GenerationHandle,
  type RunToolBatchResponse,
} from '@apphost/contracts';
import { Client } from 'pg';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import { requestOnGeneration } from '@apphost/mcp';
import {
  descriptors,
  dropSchemasWithPrefix,
  eventually,
  latch,
  TEST_DATABASE_URL,
  startFakeProviders,
  startPrivateNats,
  uniquePrefix,
  PUBLISHED_SERVERS,
  STATEFUL_NONCE_RESOURCE,
  type PrivateNats,
} from '@apphost/testing';
import { fixtureSpec, profile, publishedSpec, token } from './catalog-harness';
import { bootBatchPlane, type BatchPlane } from './tool-batches-harness';

/**
 * Model-originated UI tool calls end to end: the real gateway, lifecycle-store, sealed-result-store,
 * binding-registry, catalog-policy and governed-operations (booted by path) on a private NATS, real PostgreSQL and
 * Redis, and real stdio MCP servers.
 */
const SYSMON = PUBLISHED_SERVERS.systemMonitor;
const VANILLA = PUBLISHED_SERVERS.basicVanillaJs;
const principal = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };

describe('model tool batches in the plane', () => {
  const prefix = uniquePrefix();
  let nats: PrivateNats;
  let providers: { stop(): Promise<void> };
  let plane: BatchPlane;
  let alice: string;
  let pg: Client;

  const http = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${plane.base}${url}`, {
      method,
      headers: { authorization: `Bearer ${alice}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
  };
  const session = async (appName: string, sessionId: string) => expect((await http('POST', '/v1/sessions', { appName, sessionId })).status).toBe(201);
  const batch = async (sessionId: string, body: Record<string, unknown>) => http('POST', `/v1/sessions/${sessionId}/tool-batches`, body);
  const key = (appName: string, sessionId: string) => ({ tenant: 'acme', appName, userId: 'alice', sessionId });
  const events = async (appName: string, sessionId: string) => {
    const res = await http('GET', `/v1/sessions/${sessionId}/events?appName=${appName}`);
    expect(res.status).toBe(200);
    return { text: res.text, events: res.body.events as Record<string, unknown>[] };
  };
  const resolve = (appName: string, sessionId: string, ev: RunToolBatchResponse, index = 0) =>
    plane.sealed.client.request(SealedResolve, {
      key: {
        session: key(appName, sessionId),
        incarnation: ev.incarnation,
        eventId: String(ev.eventId),
        functionCallId: descriptors(ev)[index].correlation.functionCallId,
        recordId: descriptors(ev)[index].sealedResultRef!.recordId,
      },
    });
  /** The sealed record's row as the store holds it (the commit runs after the batch's reply). */
  const recordState = async (ev: RunToolBatchResponse): Promise<{ state: string; event_id: string | null } | undefined> =>
    (
      await pg.query(`SELECT state, event_id FROM "${prefix}sealed_result_store".sealed_records WHERE record_id = $1`, [
        descriptors(ev)[0].sealedResultRef!.recordId,
      ])
    ).rows[0];
  const failedCommits = async (): Promise<number> =>
    (await plane.governed.running.context.metrics.registry.getSingleMetric('apphost_governed_sealed_commits_total')?.get())?.values.find(
      (v) => v.labels['outcome'] === 'failed',
    )?.value ?? 0;
  /** The app-safe generation of the session (per-session affinity: the one the UI calls ran on). */
  const appSafe = async (appName: string, sessionId: string, toolsetId: string): Promise<GenerationHandle> =>
    plane.registry.client.request(
      RegistryAcquireGeneration,
      {
        toolsetId,
        connectionClass: 'app-safe',
        principal,
        session: { key: key(appName, sessionId), incarnation: 1 },
        holder: { kind: 'view', id: `probe-${sessionId}` },
      },
      { timeoutMs: 30_000 },
    );
  const nonceOf = async (appName: string, sessionId: string, toolsetId = 'nonce'): Promise<string | null> => {
    const h = await appSafe(appName, sessionId, toolsetId);
    const reply = await requestOnGeneration(
      plane.registry.client,
      ConnCallTool,
      h,
      { callId: `probe-${Date.now()}`, name: 'whoami', arguments: {} },
      { timeoutMs: 30_000 },
    );
    return (reply as unknown as { result: { structuredContent: { nonce: string | null } } }).result.structuredContent.nonce;
  };

  beforeAll(async () => {
    nats = await startPrivateNats();
    providers = await startFakeProviders(nats.url, ['export-audit']);
    plane = await bootBatchPlane(
      nats.url,
      prefix,
      {
        CATALOG_APP_TOOLSETS: JSON.stringify({
          'nonce-app': [{ toolsetId: 'nonce' }],
          'monitor-app': [{ toolsetId: 'sysmon' }],
          'drift-app': [{ toolsetId: 'drift' }],
          'vanilla-app': [{ toolsetId: 'vanilla' }],
          'echo-app': [{ toolsetId: 'echo' }],
          'legacy-app': [{ toolsetId: 'legacy' }],
          'careful-app': [{ toolsetId: 'careful' }],
          'blank-app': [{ toolsetId: 'blank' }],
        }),
      },
      // PENDING records are collectable at once; GC runs only when a test asks (committed records never are).
      { GOVERNED_SEAL_PENDING_TTL_MS: '0' },
    );
    alice = await token('alice');
    pg = new Client({ connectionString: TEST_DATABASE_URL });
    await pg.connect();
    await plane.registry.client.request(RegistryPutProfile, { profileId: 'p1', profile: profile() });
    const put = (toolsetId: string, spec: Parameters<typeof plane.registry.client.request<typeof RegistryPutToolset>>[1]['spec']) =>
      plane.registry.client.request(RegistryPutToolset, { toolsetId, spec }, { timeoutMs: 30_000 });
    expect((await put('nonce', fixtureSpec('stateful-nonce', 'p1'))).status.state).toBe('PROFILE_BOUND');
    expect((await put('sysmon', publishedSpec('systemMonitor', 'p1'))).status.state).toBe('PROFILE_BOUND');
    expect((await put('drift', fixtureSpec('hostile', 'p1', ['--mode=drift']))).status.state).toBe('PROFILE_BOUND');
    expect((await put('vanilla', publishedSpec('basicVanillaJs', 'p1'))).status.state).toBe('PROFILE_BOUND');
    expect((await put('echo', fixtureSpec('hostile', 'p1', ['--mode=normal']))).status.state).toBe('PROFILE_BOUND');
    expect((await put('legacy', fixtureSpec('stateful-nonce', null))).status.state).toBe('MODEL_ONLY');
    expect((await put('blank', fixtureSpec('hostile', 'p1', ['--mode=blank-results']))).status.state).toBe('PROFILE_BOUND');
    expect((await put('careful', { ...fixtureSpec('stateful-nonce', 'p1'), requireConfirmation: ['start-session'] })).status).toMatchObject({
      state: 'PROFILE_BOUND',
      requireConfirmation: ['start-session'],
    });
  }, 120_000);

  afterAll(async () => {
    await pg?.end();
    await plane?.stop();
    await providers?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  it('one UI call: the model gets the projection, the sealed record the full result, one event carries the descriptor', async () => {
    await session('nonce-app', 'b-ui');
    const res = await batch('b-ui', { appName: 'nonce-app', invocationId: 'inv-1', calls: [{ tool: 'start-session', arguments: { label: 'first' } }] });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    expect(ev).toMatchObject({ eventId: expect.any(Number), incarnation: 1, rejection: null });
    expect(ev.functionResponses).toHaveLength(1);
    const [fr] = ev.functionResponses;
    // The missing id was populated deterministically.
    expect(fr.functionCallId).toMatch(/^fc-[0-9a-f]{32}$/);
    expect(fr.name).toBe('start-session');
    expect(Object.keys(fr.response).sort()).toEqual(['content']);
    expect(fr.response).not.toHaveProperty('structuredContent');
    expect(fr.response).not.toHaveProperty('_meta');

    expect(ev.widgets).toEqual([
      {
        schemaVersion: 1,
        resourceUri: STATEFUL_NONCE_RESOURCE,
        correlation: { invocationId: 'inv-1', functionCallId: fr.functionCallId },
        serverId: 'nonce',
        toolsetId: 'nonce',
        bindingRevision: expect.stringMatching(/^v1\./),
        sealedResultRef: { recordId: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), schemaVersion: 1 },
      },
    ]);

    const sealed = await resolve('nonce-app', 'b-ui', ev);
    expect(sealed.transfer).toBe('inline');
    const envelope = (sealed as { envelope: { result: Record<string, unknown>; refresh: Record<string, unknown> } }).envelope;
    const nonce = (envelope.result.structuredContent as { nonce: string }).nonce;
    expect(nonce).toMatch(/^[0-9a-f-]{36}$/);
    expect(envelope.result.content).toEqual(fr.response.content);
    expect(envelope.refresh).toMatchObject({
      toolsetId: 'nonce',
      nativeToolName: 'start-session',
      arguments: { kind: 'inline', value: { label: 'first' } },
      initiatingOrigin: 'model',
      correlation: { invocationId: 'inv-1', functionCallId: fr.functionCallId },
    });
    // The call reached the app-safe generation of this session: its connection holds the nonce the seal holds.
    expect(await nonceOf('nonce-app', 'b-ui')).toBe(nonce);

    const listed = await events('nonce-app', 'b-ui');
    expect(listed.events).toHaveLength(1);
    expect(listed.events[0]).toMatchObject({
      id: ev.eventId,
      invocationId: 'inv-1',
      widgets: ev.widgets,
      functionResponses: [{ id: fr.functionCallId, name: 'start-session', response: fr.response }],
      immediateCaller: 'model',
    });
    // The text content of the result echoes the nonce as JSON; only the sealed record has structuredContent.
    expect(listed.text).not.toContain('structuredContent');
    expect(listed.text).not.toContain('"_meta"');

    // The same batch again populates the same id (deterministic), and a model-chosen id is kept.
    const again = await batch('b-ui', { appName: 'nonce-app', invocationId: 'inv-1', calls: [{ tool: 'start-session', arguments: { label: 'first' } }] });
    expect((again.body as unknown as RunToolBatchResponse).functionResponses[0].functionCallId).toBe(fr.functionCallId);
  }, 120_000);

  it('a mixed UI/non-UI batch is one rejection event, MIXED_BATCH per call in emission order, and nothing ran', async () => {
    await session('nonce-app', 'b-mixed');
    const res = await batch('b-mixed', {
      appName: 'nonce-app',
      invocationId: 'inv-m',
      calls: [
        { functionCallId: 'call-b', tool: 'whoami', arguments: {} },
        { functionCallId: 'call-a', tool: 'start-session', arguments: { label: 'never' } },
      ],
    });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    expect(ev.rejection).toBe('MIXED_BATCH');
    expect(ev.widgets).toEqual([]);
    expect(ev.functionResponses.map((r) => [r.functionCallId, r.name])).toEqual([
      ['call-b', 'whoami'],
      ['call-a', 'start-session'],
    ]);
    for (const r of ev.functionResponses) expect(r.response).toEqual({ error: { code: 'MIXED_BATCH', message: expect.stringMatching(/one at a time/) } });
    const listed = await events('nonce-app', 'b-mixed');
    expect(listed.events).toHaveLength(1);
    expect(listed.events[0]).toMatchObject({
      id: ev.eventId,
      functionResponses: ev.functionResponses.map((r) => ({ id: r.functionCallId, name: r.name, response: r.response })),
    });
    expect(listed.events[0]).not.toHaveProperty('widgets');
    // start-session never ran on this session's app-safe connection: it holds no nonce.
    expect(await nonceOf('nonce-app', 'b-mixed')).toBeNull();
  }, 120_000);

  it('an all-non-UI batch passes the result through unchanged (structuredContent included), with no widget', async () => {
    await session('nonce-app', 'b-plain');
    const res = await batch('b-plain', { appName: 'nonce-app', invocationId: 'inv-p', calls: [{ functionCallId: 'w1', tool: 'whoami', arguments: {} }] });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    expect(ev).toMatchObject({ rejection: null, widgets: [] });
    expect(ev.functionResponses[0]).toMatchObject({
      functionCallId: 'w1',
      name: 'whoami',
      response: { content: [{ type: 'text' }], structuredContent: { nonce: null } },
    });
  }, 120_000);

  it('an all-non-UI batch is byte-identical to a direct call on the same server', async () => {
    await session('echo-app', 'b-echo');
    const args = { text: 'héllo', n: [1, 2.5, { z: null }] };
    const res = await batch('b-echo', {
      appName: 'echo-app',
      invocationId: 'inv-e',
      calls: [
        { functionCallId: 'e', tool: 'echo', arguments: args },
        { functionCallId: 'p', tool: 'poisoned', arguments: { a: 1 } },
      ],
    });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    const full = await plane.registry.client.request(
      RegistryAcquireGeneration,
      {
        toolsetId: 'echo',
        connectionClass: 'full',
        principal,
        session: { key: key('echo-app', 'b-echo'), incarnation: 1 },
        holder: { kind: 'view', id: 'probe-echo' },
      },
      { timeoutMs: 30_000 },
    );
    const direct = async (name: string, a: Record<string, unknown>) =>
      (
        (await requestOnGeneration(plane.registry.client, ConnCallTool, full, { callId: `d-${name}`, name, arguments: a }, { timeoutMs: 30_000 })) as {
          result: unknown;
        }
      ).result;
    expect(JSON.stringify(ev.functionResponses[0].response)).toBe(JSON.stringify(await direct('echo', args)));
    expect(JSON.stringify(ev.functionResponses[1].response)).toBe(JSON.stringify(await direct('poisoned', { a: 1 })));
    expect(ev.widgets).toEqual([]);
  }, 120_000);

  it('server-system-monitor: two UI calls sharing one ui:// URI get two descriptors, each with its own sealed record', async () => {
    await session('monitor-app', 'b-sys');
    const res = await batch('b-sys', {
      appName: 'monitor-app',
      invocationId: 'inv-s',
      calls: [
        { functionCallId: 's2', tool: SYSMON.uiTool, arguments: {} },
        { functionCallId: 's1', tool: SYSMON.uiTool, arguments: {} },
      ],
    });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    expect(ev.functionResponses.map((r) => r.functionCallId)).toEqual(['s2', 's1']);
    for (const r of ev.functionResponses) {
      expect(r.response).not.toHaveProperty('structuredContent');
      expect(r.response).not.toHaveProperty('_meta');
      expect(Array.isArray(r.response.content)).toBe(true);
    }
    expect(descriptors(ev).map((w) => [w.correlation.functionCallId, w.resourceUri])).toEqual([
      ['s2', SYSMON.resourceUri],
      ['s1', SYSMON.resourceUri],
    ]);
    expect(descriptors(ev)[0].sealedResultRef!.recordId).not.toBe(descriptors(ev)[1].sealedResultRef!.recordId);
    for (const index of [0, 1]) {
      const sealed = await resolve('monitor-app', 'b-sys', ev, index);
      const result = (sealed as { envelope: { result: Record<string, unknown> } }).envelope.result;
      expect(result.content).toEqual(ev.functionResponses[index].response.content);
      expect(Object.keys(result)).toEqual(expect.arrayContaining(['content', 'structuredContent']));
    }
    const listed = await events('monitor-app', 'b-sys');
    expect(listed.events).toHaveLength(1);
    expect(listed.events[0].widgets).toEqual(ev.widgets);
    expect(listed.text).not.toContain('structuredContent');
  }, 120_000);

  it(`server-basic-vanillajs: ${VANILLA.uiTool} reaches the model as its projection; the sealed record holds the whole result`, async () => {
    await session('vanilla-app', 'b-van');
    const res = await batch('b-van', { appName: 'vanilla-app', invocationId: 'inv-v', calls: [{ functionCallId: 'v1', tool: VANILLA.uiTool, arguments: {} }] });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    const response = ev.functionResponses[0].response;
    expect(Object.keys(response).every((k) => ['content', 'isError', 'resultType'].includes(k))).toBe(true);
    expect(ev.widgets).toEqual([
      expect.objectContaining({ resourceUri: VANILLA.resourceUri, toolsetId: 'vanilla', correlation: { invocationId: 'inv-v', functionCallId: 'v1' } }),
    ]);
    const sealed = (await resolve('vanilla-app', 'b-van', ev)) as { envelope: { result: Record<string, unknown> } };
    expect(Object.fromEntries(Object.entries(sealed.envelope.result).filter(([k]) => ['content', 'isError', 'resultType'].includes(k)))).toEqual(response);
    const listed = await events('vanilla-app', 'b-van');
    expect(listed.events[0].widgets).toEqual(ev.widgets);
    for (const extra of Object.keys(sealed.envelope.result).filter((k) => !['content', 'isError', 'resultType'].includes(k)))
      expect(listed.text).not.toContain(`"${extra}"`);
  }, 120_000);

  it('drift between admission and call (the hostile fixture changes the schema on every listing) fails closed: the call does not run', async () => {
    await session('drift-app', 'b-drift');
    const res = await batch('b-drift', {
      appName: 'drift-app',
      invocationId: 'inv-d',
      calls: [{ functionCallId: 'e1', tool: 'echo', arguments: { text: 'hi' } }],
    });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    expect(ev.functionResponses).toEqual([
      { functionCallId: 'e1', name: 'echo', response: { error: { code: 'TOOL_DRIFT', message: expect.stringMatching(/changed/) } } },
    ]);
    expect(ev.widgets).toEqual([]);
    expect((await events('drift-app', 'b-drift')).events).toHaveLength(1);
  }, 120_000);

  it('a result failing validation (only blank text) is an error response for that call; the event still records it', async () => {
    await session('blank-app', 'b-blank');
    const res = await batch('b-blank', {
      appName: 'blank-app',
      invocationId: 'inv-b',
      calls: [{ functionCallId: 'b1', tool: 'echo', arguments: { text: 'x' } }],
    });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    expect(ev.functionResponses).toEqual([
      { functionCallId: 'b1', name: 'echo', response: { error: { code: 'RESULT_INVALID', message: expect.any(String) } } },
    ]);
    expect(ev.widgets).toEqual([]);
    expect((await events('blank-app', 'b-blank')).events).toEqual([
      expect.objectContaining({ id: ev.eventId, functionResponses: [{ id: 'b1', name: 'echo', response: ev.functionResponses[0].response }] }),
    ]);
  }, 120_000);

  it('a session deleted (governed-operations and sealed-result-store in the cascade) and recreated: the old reference does not resolve', async () => {
    await session('nonce-app', 'b-del');
    const ev = (
      await batch('b-del', { appName: 'nonce-app', invocationId: 'inv-del', calls: [{ functionCallId: 'd1', tool: 'start-session', arguments: {} }] })
    ).body as unknown as RunToolBatchResponse;
    expect((await resolve('nonce-app', 'b-del', ev)).transfer).toBe('inline');
    const deleted = await http('DELETE', '/v1/sessions/b-del?appName=nonce-app');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ state: 'DELETED', incarnation: 1 });
    const recreated = await http('POST', '/v1/sessions', { appName: 'nonce-app', sessionId: 'b-del' });
    expect(recreated.body).toMatchObject({ incarnation: 2, state: 'ACTIVE' });
    await expect(resolve('nonce-app', 'b-del', ev)).rejects.toMatchObject({ code: expect.stringMatching(/^(NOT_FOUND|FAILED_PRECONDITION)$/) });
    await expect(resolve('nonce-app', 'b-del', { ...ev, incarnation: 2 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await events('nonce-app', 'b-del')).events).toEqual([]);
  }, 120_000);

  it('refuses before anything runs: duplicate ids (400), a tool outside the catalog (400 FAILED_PRECONDITION), an unknown session (404); no event', async () => {
    await session('nonce-app', 'b-bad');
    const dup = await batch('b-bad', {
      appName: 'nonce-app',
      invocationId: 'i',
      calls: [
        { functionCallId: 'x', tool: 'whoami', arguments: {} },
        { functionCallId: 'x', tool: 'whoami', arguments: {} },
      ],
    });
    expect(dup.status).toBe(400);
    expect(dup.body).toMatchObject({ error: { code: 'INVALID_ARGUMENT', details: { reason: 'DUPLICATE_FUNCTION_CALL_ID' } } });
    const unknown = await batch('b-bad', { appName: 'nonce-app', invocationId: 'i', calls: [{ tool: 'not-there', arguments: {} }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: { code: 'FAILED_PRECONDITION' } });
    // follow-up is app-only: not in the model catalog.
    expect((await batch('b-bad', { appName: 'nonce-app', invocationId: 'i', calls: [{ tool: 'follow-up', arguments: { nonce: 'n' } }] })).status).toBe(400);
    expect((await batch('nope', { appName: 'nonce-app', invocationId: 'i', calls: [{ tool: 'whoami', arguments: {} }] })).status).toBe(404);
    expect((await batch('b-bad', { appName: 'nonce-app', invocationId: 'i', calls: [] })).status).toBe(400);
    expect((await events('nonce-app', 'b-bad')).events).toEqual([]);
    expect(await nonceOf('nonce-app', 'b-bad')).toBeNull();
  }, 120_000);

  it('a MODEL_ONLY toolset: the legacy widget payload and the whole result, no seal; a mixed batch there is not rejected', async () => {
    await session('legacy-app', 'b-legacy');
    const res = await batch('b-legacy', {
      appName: 'legacy-app',
      invocationId: 'inv-l',
      calls: [
        { functionCallId: 'l1', tool: 'start-session', arguments: { label: 'old' } },
        { functionCallId: 'l2', tool: 'whoami', arguments: {} },
      ],
    });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    expect(ev.rejection).toBeNull();
    const nonce = (ev.functionResponses[0].response.structuredContent as { nonce: string }).nonce;
    expect(nonce).toMatch(/^[0-9a-f-]{36}$/); // the result unchanged: structuredContent reaches the model
    expect(ev.widgets).toEqual([{ resourceUri: STATEFUL_NONCE_RESOURCE, tool: 'start-session', toolArgs: { label: 'old' } }]);
    expect(await nonceOf('legacy-app', 'b-legacy', 'legacy')).toBe(nonce);
    const listed = await events('legacy-app', 'b-legacy');
    expect(listed.events[0]).toMatchObject({ widgets: ev.widgets, functionResponses: [{ id: 'l1' }, { id: 'l2' }] });
    expect(listed.text).not.toContain('sealedResultRef');
  }, 120_000);

  it('confirmation required: nothing runs until the user approves; the sealed arguments then run exactly once; a second decision is 404', async () => {
    await session('careful-app', 'b-careful');
    const res = await batch('b-careful', {
      appName: 'careful-app',
      invocationId: 'inv-c',
      calls: [{ functionCallId: 'c1', tool: 'start-session', arguments: { label: 'approved' } }],
    });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    expect(ev.functionResponses[0].response).toEqual({ error: { code: 'CONFIRMATION_REQUIRED', message: expect.any(String) } });
    expect(ev.widgets).toEqual([]);
    const [pending] = ev.confirmations;
    expect(pending).toMatchObject({ functionCallId: 'c1', tool: 'start-session', arguments: { label: 'approved' } });
    expect(await nonceOf('careful-app', 'b-careful', 'careful')).toBeNull(); // it has not run

    const decide = (body: Record<string, unknown>) => http('POST', `/v1/sessions/b-careful/confirmations/${pending.confirmationId}`, body);
    expect((await decide({ appName: 'careful-app', confirmed: true, arguments: { label: 'swapped' } })).status).toBe(400); // no new arguments, ever
    const approved = await decide({ appName: 'careful-app', confirmed: true });
    expect(approved.status).toBe(200);
    const done = approved.body as unknown as RunToolBatchResponse;
    expect(done.functionResponses[0]).toMatchObject({ functionCallId: 'c1', name: 'start-session' });
    expect(done.functionResponses[0].response).not.toHaveProperty('structuredContent');
    const sealed = (await plane.sealed.client.request(SealedResolve, {
      key: {
        session: key('careful-app', 'b-careful'),
        incarnation: 1,
        eventId: String(done.eventId),
        functionCallId: 'c1',
        recordId: descriptors(done)[0].sealedResultRef!.recordId,
      },
    })) as unknown as { envelope: { result: { structuredContent: { nonce: string } }; refresh: { arguments: unknown } } };
    expect(sealed.envelope.refresh.arguments).toEqual({ kind: 'inline', value: { label: 'approved' } });
    expect(await nonceOf('careful-app', 'b-careful', 'careful')).toBe(sealed.envelope.result.structuredContent.nonce);
    expect((await decide({ appName: 'careful-app', confirmed: true })).status).toBe(404);

    const listed = await events('careful-app', 'b-careful');
    expect(listed.events.map((e) => (e.functionCalls as { name: string }[] | undefined)?.map((c) => c.name) ?? [])).toEqual([['adk_request_confirmation'], []]);
    expect(listed.events[1]).toMatchObject({ id: done.eventId, functionResponses: [{ id: 'c1' }] });
  }, 120_000);

  it('a failure injected after sealing and before the append: no event, no resolvable reference, and GC collects the PENDING record', async () => {
    await session('nonce-app', 'b-fault');
    plane.governed.running.app.get<FaultPoints>(FAULT_POINTS).arm('batch.before-append');
    const res = await batch('b-fault', {
      appName: 'nonce-app',
      invocationId: 'inv-f',
      calls: [{ functionCallId: 'f1', tool: 'start-session', arguments: {} }],
    });
    // The tool ran: the caller is told so (not a retryable 5xx), and a retry would not run it again.
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ error: { code: 'OUTCOME_UNKNOWN', retryable: false, details: { reason: 'EXECUTED_NOT_RECORDED', cause: 'INTERNAL' } } });
    expect(await nonceOf('nonce-app', 'b-fault')).toMatch(/^[0-9a-f-]{36}$/); // the call ran and its result was sealed
    expect((await events('nonce-app', 'b-fault')).events).toEqual([]);
    expect(await plane.sealed.client.request(SealedGc, {})).toMatchObject({ deletedRecords: 1 });
    expect(await plane.sealed.client.request(SealedGc, {})).toMatchObject({ deletedRecords: 0 });
  }, 120_000);

  it('the batch answers before its commit: the record is PENDING while the commit is held, then COMMITTED to the event', async () => {
    await session('nonce-app', 'b-held');
    const hold = latch();
    plane.governed.running.app.get<FaultPoints>(FAULT_POINTS).arm('batch.before-commit', hold.action);
    const res = await batch('b-held', { appName: 'nonce-app', invocationId: 'inv-h', calls: [{ functionCallId: 'h1', tool: 'start-session', arguments: {} }] });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    await hold.reached;
    expect(await recordState(ev)).toEqual({ state: 'PENDING', event_id: null });
    hold.release();
    await eventually(async () => (await recordState(ev))?.state === 'COMMITTED', 10_000);
    expect(await recordState(ev)).toEqual({ state: 'COMMITTED', event_id: String(ev.eventId) });
  }, 120_000);

  it('a commit that fails after the append: the event stands, a resolve naming it binds the record, and GC keeps it', async () => {
    await session('nonce-app', 'b-uncommitted');
    const failedBefore = await failedCommits();
    plane.governed.running.app.get<FaultPoints>(FAULT_POINTS).arm('batch.before-commit');
    const res = await batch('b-uncommitted', {
      appName: 'nonce-app',
      invocationId: 'inv-u',
      calls: [{ functionCallId: 'u1', tool: 'start-session', arguments: {} }],
    });
    expect(res.status).toBe(200);
    const ev = res.body as unknown as RunToolBatchResponse;
    await eventually(async () => (await failedCommits()) === failedBefore + 1, 10_000);
    expect(await recordState(ev)).toEqual({ state: 'PENDING', event_id: null });
    expect((await events('nonce-app', 'b-uncommitted')).events).toEqual([expect.objectContaining({ id: ev.eventId, widgets: ev.widgets })]);
    const sealed = await resolve('nonce-app', 'b-uncommitted', ev);
    expect(sealed.transfer).toBe('inline');
    expect(await recordState(ev)).toEqual({ state: 'COMMITTED', event_id: String(ev.eventId) });
    // Expired at once (pending TTL 0) but committed: GC deletes nothing of it.
    await plane.sealed.client.request(SealedGc, {});
    expect(await recordState(ev)).toEqual({ state: 'COMMITTED', event_id: String(ev.eventId) });
  }, 120_000);
});
