import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BusClient } from '@apphost/bus';
import { LifecycleGetSession } from '@apphost/contracts';
import {
  connectTestTransport,
  dropSchemasWithPrefix,
  spawnTs,
  TEST_BUS_PREFIX,
  TEST_DATABASE_URL,
  TEST_NATS_URL,
  TEST_REDIS_URL,
  uniquePrefix,
  waitForExit,
} from '@apphost/testing';
import { ENTRY, listServices, startPlane } from './plane-process';

describe('all-in-one plane', () => {
  let home: string;

  beforeEach(() => {
    // 0700, like a fresh clone in a home directory or mktemp -d: as root the embedded PostgreSQL runs as the postgres
    // user, who cannot enter it, and must still start and find its data again after a restart.
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-plane-'));
    fs.chmodSync(home, 0o700);
  });

  afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

  it('boots with no external services, serves every service, stops on SIGINT and keeps its data across a restart', async () => {
    const env = { APPHOST_HOME: home, NATS_URL: '', DATABASE_URL: '', REDIS_URL: '' };
    const first = await startPlane(env);
    const tokenFile = path.join(home, 'dev-token');
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    const before = await listServices(first.base, tokenFile);
    expect(before.map((s) => s.status)).toEqual(Array(7).fill('ok'));
    expect(new Set(before.map((s) => s.describe?.transport))).toEqual(new Set(['in-process']));
    const governed = before.find((s) => s.service === 'governed-operations');
    expect(governed?.describe?.stores[0]).toMatchObject({ kind: 'memory', ready: true });
    const namespaces = Object.fromEntries(before.map((s) => [s.service, s.describe?.stores.find((st) => st.kind === 'postgres')?.namespace]));
    expect(Object.values(namespaces).filter(Boolean)).toHaveLength(5);

    first.child.kill('SIGINT');
    const stopped = await waitForExit(first.child, 30_000);
    expect(stopped.code).toBe(0);

    const second = await startPlane(env);
    const after = await listServices(second.base, tokenFile);
    expect(Object.fromEntries(after.map((s) => [s.service, s.describe?.stores.find((st) => st.kind === 'postgres')?.namespace]))).toEqual(namespaces);
    second.child.kill('SIGTERM');
    expect((await waitForExit(second.child, 30_000)).code).toBe(0);
  }, 180_000);

  it('uses the real NATS, PostgreSQL and Redis when their URLs are set', async () => {
    const prefix = uniquePrefix();
    try {
      const plane = await startPlane({
        APPHOST_HOME: home,
        NATS_URL: TEST_NATS_URL,
        DATABASE_URL: TEST_DATABASE_URL,
        REDIS_URL: TEST_REDIS_URL,
        DATABASE_SCHEMA_PREFIX: prefix,
        BUS_SUBJECT_PREFIX: TEST_BUS_PREFIX,
      });
      const services = await listServices(plane.base, path.join(home, 'dev-token'));
      expect(services.map((s) => s.status)).toEqual(Array(7).fill('ok'));
      expect(new Set(services.map((s) => s.describe?.transport))).toEqual(new Set(['nats']));
      expect(services.find((s) => s.service === 'governed-operations')?.describe?.stores[0]).toMatchObject({ kind: 'redis', ready: true });
      expect(fs.existsSync(path.join(home, 'pg'))).toBe(false);

      // A session deleted through the gateway cascades to the sealed-result store, export-audit and binding-registry over the bus.
      const token = fs.readFileSync(path.join(home, 'dev-token'), 'utf8').trim();
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const created = await fetch(`${plane.base}/v1/sessions`, { method: 'POST', headers: auth, body: JSON.stringify({ appName: 'demo' }) });
      expect(created.status).toBe(201);
      const session = (await created.json()) as { sessionId: string; userId: string };
      const deleted = await fetch(`${plane.base}/v1/sessions/${session.sessionId}?appName=demo`, { method: 'DELETE', headers: auth });
      expect(deleted.status).toBe(200);
      expect(await deleted.json()).toMatchObject({ state: 'DELETED' });
      const transport = await connectTestTransport('plane-test');
      try {
        const view = await new BusClient({ transport, defaultTimeoutMs: 5000 }).request(LifecycleGetSession, {
          session: { tenant: 'dev', appName: 'demo', userId: session.userId, sessionId: session.sessionId },
        });
        expect(view.cascade?.participants).toEqual([
          expect.objectContaining({ name: 'governed-operations', revoked: true, purged: true }),
          expect.objectContaining({ name: 'sealed-result-store', revoked: true, purged: true }),
          expect.objectContaining({ name: 'export-audit', revoked: true, purged: true }),
          expect.objectContaining({ name: 'binding-registry', revoked: true, purged: true }),
        ]);
      } finally {
        await transport.close();
      }
      plane.child.kill('SIGTERM');
      expect((await waitForExit(plane.child, 30_000)).code).toBe(0);
    } finally {
      await dropSchemasWithPrefix(prefix);
    }
  }, 120_000);

  it('runs two planes on one NATS server without either answering the other', async () => {
    const planes = ['a', 'b'].map((name) => ({ name, prefix: uniquePrefix(), home: fs.mkdtempSync(path.join(os.tmpdir(), `apphost-plane-${name}-`)) }));
    const started: Awaited<ReturnType<typeof startPlane>>[] = [];
    try {
      for (const p of planes) {
        fs.chmodSync(p.home, 0o755);
        const env = {
          APPHOST_HOME: p.home,
          NATS_URL: TEST_NATS_URL,
          DATABASE_URL: TEST_DATABASE_URL,
          REDIS_URL: TEST_REDIS_URL,
          DATABASE_SCHEMA_PREFIX: p.prefix,
        };
        started.push(await startPlane({ ...env, BUS_SUBJECT_PREFIX: `${TEST_BUS_PREFIX}-${p.name}` }));
      }
      // Same service names, same queue groups, one server: without namespaces half of these would be the other plane's.
      const instanceOf = async (i: number) => {
        const services = await listServices(started[i].base, path.join(planes[i].home, 'dev-token'));
        expect(services.map((s) => s.status)).toEqual(Array(7).fill('ok'));
        return new Set(services.map((s) => s.describe?.instanceId));
      };
      const seen = [new Set<string | undefined>(), new Set<string | undefined>()];
      for (let round = 0; round < 6; round++) for (const i of [0, 1]) for (const id of await instanceOf(i)) seen[i].add(id);
      expect(seen[0].size).toBe(1);
      expect(seen[1].size).toBe(1);
      expect([...seen[0]][0]).not.toBe([...seen[1]][0]);
    } finally {
      for (const plane of started) {
        plane.child.kill('SIGTERM');
        await waitForExit(plane.child, 30_000);
      }
      for (const p of planes) {
        await dropSchemasWithPrefix(p.prefix);
        fs.rmSync(p.home, { recursive: true, force: true });
      }
    }
  }, 150_000);

  it('exports its spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    const received: { url?: string; body: Buffer }[] = [];
    const collector = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ url: req.url, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
      const plane = await startPlane({ APPHOST_HOME: home, NATS_URL: '', DATABASE_URL: '', REDIS_URL: '', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
      expect((await listServices(plane.base, path.join(home, 'dev-token'))).map((s) => s.status)).toEqual(Array(7).fill('ok'));
      plane.child.kill('SIGTERM'); // the batch processor flushes on shutdown
      expect((await waitForExit(plane.child, 30_000)).code).toBe(0);
      const traces = received.filter((r) => r.url === '/v1/traces');
      expect(traces.length).toBeGreaterThan(0);
      const all = Buffer.concat(traces.map((t) => t.body)).toString('latin1');
      expect(all).toContain('apphost-plane');
      expect(all).toContain('HTTP GET /v1/services');
      expect(all).toContain('bus handle apphost.lifecycle-store.describe.v1');
    } finally {
      await new Promise((resolve) => collector.close(resolve));
    }
  }, 120_000);

  it('refuses bad configuration with a clear message and exit code 2', async () => {
    const child = spawnTs(ENTRY, { APPHOST_HOME: home, APPHOST_PORT: 'eighty' });
    const result = await waitForExit(child, 30_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('APPHOST_PORT');
  });
});
