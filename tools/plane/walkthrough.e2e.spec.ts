import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunToolBatchResponse } from '@apphost/contracts';
import { descriptors, PUBLISHED_SERVERS, REPO_ROOT, waitForExit } from '@apphost/testing';
import { startPlane } from './plane-process';

/**
 * The README walkthrough, step by step, against the plane as `npm start` runs it (embedded NATS, PostgreSQL and
 * coordination; no external services) with the example files in `examples/` and the published
 * `@modelcontextprotocol/server-basic-vanillajs` over stdio.
 */
const VANILLA = PUBLISHED_SERVERS.basicVanillaJs;
const example = (name: string) => JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', name), 'utf8')) as unknown;

describe('README walkthrough on the all-in-one plane', () => {
  let home: string;
  let plane: Awaited<ReturnType<typeof startPlane>>;
  let call: (method: string, url: string, body?: unknown) => Promise<{ status: number; text: string; body: Record<string, unknown> }>;

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-walkthrough-'));
    fs.chmodSync(home, 0o755);
    plane = await startPlane({
      APPHOST_HOME: home,
      NATS_URL: '',
      DATABASE_URL: '',
      REDIS_URL: '',
      REGISTRY_ALLOW_STDIO: 'true',
      CATALOG_APP_TOOLSETS: JSON.stringify({ demo: [{ toolsetId: 'vanilla' }, { toolsetId: 'careful' }] }),
    });
    const token = fs.readFileSync(path.join(home, 'dev-token'), 'utf8').trim();
    call = async (method, url, body) => {
      const res = await fetch(`${plane.base}${url}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
    };
  }, 120_000);

  afterAll(async () => {
    if (plane) {
      plane.child.kill('SIGTERM');
      await waitForExit(plane.child, 30_000);
    }
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('profile, toolsets, session, catalog, a UI tool batch, the events, and a confirmed call', async () => {
    expect((await call('PUT', '/v1/profiles/demo', example('demo-profile.json'))).status).toBe(200);
    for (const [id, file] of [['vanilla', 'vanilla-toolset.json'], ['careful', 'careful-toolset.json']]) {
      const put = await call('PUT', `/v1/toolsets/${id}`, example(file));
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ status: { state: 'PROFILE_BOUND' } });
    }
    expect((await call('POST', '/v1/sessions', { appName: 'demo', sessionId: 's1' })).status).toBe(201);
    const catalog = await call('GET', '/v1/sessions/s1/catalog?appName=demo');
    expect((catalog.body.tools as { name: string; resourceUri: string }[]).map((t) => [t.name, t.resourceUri])).toEqual([
      [VANILLA.uiTool, VANILLA.resourceUri],
      [`careful_${VANILLA.uiTool}`, VANILLA.resourceUri],
    ]);

    const batch = await call('POST', '/v1/sessions/s1/tool-batches', { appName: 'demo', invocationId: 'inv-1', calls: [{ functionCallId: 'call-1', tool: VANILLA.uiTool, arguments: {} }] });
    expect(batch.status).toBe(200);
    const ev = batch.body as unknown as RunToolBatchResponse;
    expect(ev.functionResponses[0]).toMatchObject({ functionCallId: 'call-1', name: VANILLA.uiTool, response: { content: [{ type: 'text' }] } });
    expect(ev.functionResponses[0].response).not.toHaveProperty('structuredContent');
    expect(descriptors(ev)).toEqual([expect.objectContaining({ resourceUri: VANILLA.resourceUri, correlation: { invocationId: 'inv-1', functionCallId: 'call-1' }, sealedResultRef: expect.any(Object) })]);
    const events = await call('GET', '/v1/sessions/s1/events?appName=demo');
    expect(events.body.events).toEqual([expect.objectContaining({ id: ev.eventId, widgets: ev.widgets })]);
    expect(events.text).not.toContain('structuredContent');

    const held = (await call('POST', '/v1/sessions/s1/tool-batches', { appName: 'demo', invocationId: 'inv-2', calls: [{ functionCallId: 'call-2', tool: `careful_${VANILLA.uiTool}`, arguments: {} }] })).body as unknown as RunToolBatchResponse;
    expect(held.functionResponses[0].response).toMatchObject({ error: { code: 'CONFIRMATION_REQUIRED' } });
    const decided = await call('POST', `/v1/sessions/s1/confirmations/${held.confirmations[0].confirmationId}`, { appName: 'demo', confirmed: true });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ functionResponses: [{ functionCallId: 'call-2', response: { content: [{ type: 'text' }] } }], widgets: [expect.objectContaining({ resourceUri: VANILLA.resourceUri })] });
  }, 120_000);
});
