import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  bootService,
  eventually,
  serviceConformance,
  startFakeProviders,
  startPrivateNats,
  uniquePrefix,
  type PrivateNats,
  type ServiceUnderTest,
} from '@apphost/testing';
import { gatewayService } from './service';

const tokenDir = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-gateway-'));
const env = { AUTH_MODE: 'development', AUTH_DEV_TOKEN_FILE: path.join(tokenDir, 'dev-token') };

serviceConformance(gatewayService, 'apps/gateway/src/main.ts', env);

describe('gateway v1 services view', () => {
  let gateway: ServiceUnderTest;
  let base: string;
  // A NATS of this suite alone: "every other service is absent" must not depend on what else runs on the machine.
  let nats: PrivateNats;

  beforeAll(async () => {
    nats = await startPrivateNats();
    gateway = await bootService(gatewayService, uniquePrefix(), { ...env, NATS_URL: nats.url });
    base = gateway.running.url!.replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await gateway.stop();
    await nats.stop();
    fs.rmSync(tokenDir, { recursive: true, force: true });
  });

  it('echoes a safe caller correlation id on every response, and replaces an unsafe one', async () => {
    const kept = await fetch(`${base}/healthz`, { headers: { 'x-correlation-id': 'trace-42' } });
    expect(kept.headers.get('x-correlation-id')).toBe('trace-42');
    const replaced = await fetch(`${base}/healthz`, { headers: { 'x-correlation-id': 'bad id\twith tab' } });
    expect(replaced.headers.get('x-correlation-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('requires a bearer token', async () => {
    const res = await fetch(`${base}/v1/services`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: expect.objectContaining({ code: 'UNAUTHENTICATED' }) });
  });

  it("lists every service's describe, with a typed error for those not running", async () => {
    const token = fs.readFileSync(env.AUTH_DEV_TOKEN_FILE, 'utf8').trim();
    const res = await fetch(`${base}/v1/services`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const { services } = (await res.json()) as { services: { service: string; status: string; error?: { code: string } }[] };
    expect(services).toHaveLength(7);
    expect(services.find((s) => s.service === 'gateway')).toMatchObject({ status: 'ok' });
    // Nothing else is running in this test: each of them is a fast, typed "not executed".
    for (const s of services.filter((x) => x.service !== 'gateway')) {
      expect(s).toMatchObject({ status: 'error', error: { code: 'UNAVAILABLE' } });
    }
  });

  it('serves an OpenAPI document that covers every route it serves', async () => {
    const res = await fetch(`${base}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    const app = gateway.running.app as unknown as { getHttpAdapter(): { getInstance(): { router: { stack: { route?: { path: string } }[] } } } };
    // Express writes path parameters as `/:name` (and a literal colon as `\:`), OpenAPI as `/{name}`.
    const served = app
      .getHttpAdapter()
      .getInstance()
      .router.stack.flatMap((layer) => (layer.route ? [layer.route.path.replace(/\/:([A-Za-z0-9_]+)/g, '/{$1}').replace(/\\:/g, ':')] : []));
    expect(served.length).toBeGreaterThanOrEqual(5);
    expect(Object.keys(doc.paths).sort()).toEqual([...new Set(served)].sort());
  });
});

describe('gateway readiness reflects the bus and the services it routes to', () => {
  const routed = gatewayService.routesTo ?? [];
  let nats: PrivateNats;
  let gateway: ServiceUnderTest;
  let base: string;

  async function readiness(): Promise<{ status: number; body: { ready: boolean; bus: boolean; services?: { service: string; ready: boolean }[] } }> {
    const started = performance.now();
    const res = await fetch(`${base}/readyz`);
    // Inside the manifests' 2 s readiness probe timeout, whatever is down.
    expect(performance.now() - started).toBeLessThan(2000);
    return { status: res.status, body: (await res.json()) as never };
  }

  beforeAll(async () => {
    nats = await startPrivateNats();
    gateway = await bootService(gatewayService, uniquePrefix(), { ...env, NATS_URL: nats.url });
    base = String(gateway.running.url).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await gateway.stop();
    await nats.stop();
  });

  it('routes to the five services behind its routes', () => {
    expect([...routed].sort()).toEqual(['binding-registry', 'catalog-policy', 'export-audit', 'governed-operations', 'lifecycle-store']);
  });

  it('is not ready while one routed service does not answer, naming it; ready once all answer', async () => {
    const allButExport = await startFakeProviders(
      nats.url,
      routed.filter((s) => s !== 'export-audit'),
    );
    try {
      const missing = await readiness();
      expect(missing.status).toBe(503);
      expect(missing.body).toMatchObject({ ready: false, bus: true });
      expect(missing.body.services?.filter((s) => !s.ready)).toEqual([
        { service: 'export-audit', ready: false, error: { code: 'UNAVAILABLE', message: 'export-audit is unavailable; the request was not executed' } },
      ]);
      const exportAudit = await startFakeProviders(nats.url, ['export-audit']);
      try {
        // Answers are cached for a moment: probes never flood the bus.
        const ready = await eventually(async () => {
          const r = await readiness();
          return r.status === 200 ? r : undefined;
        }, 5000);
        expect(ready.body).toMatchObject({ ready: true, bus: true });
        expect(ready.body.services?.map((s) => s.service).sort()).toEqual([...routed].sort());
      } finally {
        await exportAudit.stop();
      }
    } finally {
      await allButExport.stop();
    }
  });

  it('is not ready, at once, when NATS is down; a bus-backed route answers 503 UNAVAILABLE at once', async () => {
    await nats.stop();
    await eventually(async () => !gateway.transport.isConnected(), 5000, 20);
    const down = await readiness();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ ready: false, bus: false });

    // A bus-backed route answers at once: the request was never sent, so it is UNAVAILABLE (retry), not "may have run".
    const token = fs.readFileSync(env.AUTH_DEV_TOKEN_FILE, 'utf8').trim();
    const started = performance.now();
    const res = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appName: 'app' }),
    });
    expect(performance.now() - started).toBeLessThan(500);
    expect(res.status).toBe(503);
    const { error } = (await res.json()) as { error: { code: string; retryable: boolean; message: string } };
    expect(error).toMatchObject({ code: 'UNAVAILABLE', retryable: true, message: 'the bus is disconnected; the request to lifecycle-store was not sent' });
  });
});
