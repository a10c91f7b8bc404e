import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BusServer, NatsTransport } from '@apphost/bus';
import {
  AppHostError,
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRebindToolset,
  RegistryRevokeToolset,
  RegistryRotateKeys,
  type ToolsetStatus,
} from '@apphost/contracts';
import { startService, type RunningService } from '@apphost/runtime';
import { connectTestTransport, startPrivateNats, TEST_BUS_PREFIX, type PrivateNats } from '@apphost/testing';
import pino from 'pino';
import { gatewayService } from '../service';

const tokenDir = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-gateway-admin-'));
const status = (toolsetId: string, state: ToolsetStatus['state'], bindingGeneration = 1): ToolsetStatus => ({
  toolsetId,
  profileId: 'p',
  state,
  bindingGeneration,
  bindingRevision: null,
  readiness: [],
  transport: 'stdio',
  protocol: 'legacy',
  liveConnections: 0,
});

let nats: PrivateNats;
let gateway: RunningService;
let registryTransport: NatsTransport;
let registry: BusServer;
let base: string;
let token: string;
const seen: { op: string; payload: unknown }[] = [];

beforeAll(async () => {
  nats = await startPrivateNats();
  // A stand-in binding registry on this suite's own NATS: it records what the gateway sends.
  registryTransport = await connectTestTransport('fake-registry', { natsUrl: nats.url });
  registry = new BusServer({
    transport: registryTransport,
    instanceId: 'fake-registry',
    queueGroup: 'binding-registry',
    logger: { error: () => undefined, warn: () => undefined },
  });
  registry.register(RegistryPutProfile, (r) => (seen.push({ op: 'put-profile', payload: r }), { profileId: r.profileId, created: true, fingerprint: 'f' }));
  registry.register(RegistryPutToolset, (r) => (seen.push({ op: 'put-toolset', payload: r }), { created: true, status: status(r.toolsetId, 'PROFILE_BOUND') }));
  registry.register(RegistryGetToolset, (r) => {
    if (r.toolsetId === 'missing') throw new AppHostError('NOT_FOUND', 'toolset missing does not exist');
    return status(r.toolsetId, 'MODEL_ONLY');
  });
  registry.register(RegistryRevokeToolset, (r) => (seen.push({ op: 'revoke', payload: r }), status(r.toolsetId, 'CLOSED')));
  registry.register(RegistryRebindToolset, (r) => {
    seen.push({ op: 'rebind', payload: r });
    if (r.profileId === 'missing') throw new AppHostError('NOT_FOUND', 'profile missing does not exist');
    return { ...status(r.toolsetId, 'PROFILE_BOUND', 2), profileId: r.profileId ?? 'p' };
  });
  registry.register(RegistryRotateKeys, () => ({ activeKeyId: 'k2', verifyingKeyIds: ['k1'], retiredKeyIds: [] }));
  registry.start();
  await registry.ready();

  const transport = await connectTestTransport('gateway', { natsUrl: nats.url });
  gateway = await startService(gatewayService, {
    env: {
      AUTH_MODE: 'development',
      AUTH_DEV_TOKEN_FILE: path.join(tokenDir, 'dev-token'),
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      BUS_SUBJECT_PREFIX: TEST_BUS_PREFIX,
    },
    transport,
    http: true,
    processMetrics: false,
    logger: pino({ level: 'silent' }),
  });
  base = gateway.url!.replace('[::1]', '127.0.0.1');
  token = fs.readFileSync(path.join(tokenDir, 'dev-token'), 'utf8').trim();
  Object.assign(gateway, { transportToClose: transport });
}, 30_000);

afterAll(async () => {
  await gateway?.close();
  await (gateway as unknown as { transportToClose?: NatsTransport })?.transportToClose?.close();
  await registry?.stop(100);
  await registryTransport?.close();
  await nats?.stop();
  fs.rmSync(tokenDir, { recursive: true, force: true });
});

const call = (method: string, route: string, body?: unknown, auth = true) =>
  fetch(`${base}${route}`, {
    method,
    headers: { ...(auth ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const spec = { connection: { kind: 'stdio', command: '/usr/bin/env', args: ['true'] }, profileId: 'p' };

describe('gateway admin API for the binding registry', () => {
  it('requires a bearer token', async () => {
    expect((await call('GET', '/v1/toolsets/t1', undefined, false)).status).toBe(401);
  });

  it('PUT /v1/toolsets/{id} validates the spec, then forwards it with defaults applied', async () => {
    const bad = await call('PUT', '/v1/toolsets/t1', { connection: { kind: 'ftp' }, profileId: 'p' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    const res = await call('PUT', '/v1/toolsets/t1', spec);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ created: true, status: { toolsetId: 't1', state: 'PROFILE_BOUND' } });
    expect(seen.find((s) => s.op === 'put-toolset')?.payload).toMatchObject({ toolsetId: 't1', spec: { protocol: 'legacy', listCacheTtlMs: 0 } });
  });

  it('PUT /v1/profiles/{id} refuses a profile without the MCP App MIME type before reaching the registry', async () => {
    const res = await call('PUT', '/v1/profiles/p', { extension: { mimeTypes: ['text/html'] } });
    expect(res.status).toBe(400);
    expect(seen.some((s) => s.op === 'put-profile')).toBe(false);
  });

  it('GET /v1/toolsets/{id} passes typed registry errors through', async () => {
    expect(await (await call('GET', '/v1/toolsets/t1')).json()).toMatchObject({ state: 'MODEL_ONLY' });
    const missing = await call('GET', '/v1/toolsets/missing');
    expect(missing.status).toBe(404);
  });

  it('POST /v1/toolsets/{id}:revoke and :rebind, and nothing else', async () => {
    expect(await (await call('POST', '/v1/toolsets/t1:revoke')).json()).toMatchObject({ state: 'CLOSED' });
    expect(await (await call('POST', '/v1/toolsets/t1:rebind')).json()).toMatchObject({ state: 'PROFILE_BOUND', bindingGeneration: 2 });
    expect((await call('POST', '/v1/toolsets/t1:explode')).status).toBe(400);
    expect(seen.filter((s) => s.op === 'revoke' || s.op === 'rebind').map((s) => s.op)).toEqual(['revoke', 'rebind']);
  });

  it('POST /v1/toolsets/{id}:rebind passes { profileId } through, validated; an unknown profile is 404', async () => {
    const narrowed = await call('POST', '/v1/toolsets/t2:rebind', { profileId: 'narrow' });
    expect(narrowed.status).toBe(200);
    expect(await narrowed.json()).toMatchObject({ toolsetId: 't2', profileId: 'narrow', bindingGeneration: 2 });
    expect((await call('POST', '/v1/toolsets/t3:rebind', {})).status).toBe(200);
    const before = seen.length;
    for (const bad of [{ profileId: 'not a valid id' }, { profileId: 'narrow', extra: true }, ['narrow']]) {
      const res = await call('POST', '/v1/toolsets/t2:rebind', bad);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    }
    expect(seen.length).toBe(before); // nothing invalid reached the registry
    expect((await call('POST', '/v1/toolsets/t2:rebind', { profileId: 'missing' })).status).toBe(404);
    expect(seen.filter((s) => s.op === 'rebind').map((s) => s.payload)).toEqual([
      { toolsetId: 't1' },
      { toolsetId: 't2', profileId: 'narrow' },
      { toolsetId: 't3' },
      { toolsetId: 't2', profileId: 'missing' },
    ]);
  });

  it('POST /v1/keys:rotate answers key ids only', async () => {
    const res = await call('POST', '/v1/keys:rotate');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ activeKeyId: 'k2', verifyingKeyIds: ['k1'], retiredKeyIds: [] });
  });

  it('documents every admin route in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths['/v1/toolsets/{toolsetId}']).sort()).toEqual(['get', 'post', 'put']);
    expect(doc.paths['/v1/profiles/{profileId}']).toHaveProperty('put');
    expect(doc.paths['/v1/keys:rotate']).toHaveProperty('post');
    const rebindBody = (doc.paths['/v1/toolsets/{toolsetId}']['post'] as { requestBody: { content: Record<string, { schema: unknown }> } }).requestBody;
    expect(rebindBody.content['application/json'].schema).toMatchObject({ type: 'object', properties: { profileId: { type: 'string' } } });
  });
});
