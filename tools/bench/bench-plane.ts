import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BusClient, NatsTransport, type BusTransport } from '@apphost/bus';
import { dropSchemasWithPrefix, freePort, startPrivateNats, TEST_DATABASE_URL, TEST_REDIS_URL, uniquePrefix } from '@apphost/testing';
import { JWT_GATEWAY_ENV } from '../plane/catalog-harness';
import { startPlane } from '../plane/plane';
import { parsePlaneConfig } from '../plane/plane-config';
import { parseServicesConfig, startServiceProcesses } from '../plane/service-processes';
import type { MetricsSource } from './stage-trace';

/**
 * How a bench runs the plane, as users run it: `plane` is `npm start` (every service in this process on the
 * in-process bus), `services` is `npm run start:services` (seven processes over a private NATS server, as deployed).
 */
export type BenchMode = 'plane' | 'services';

/** `BENCH_MODE`: `plane`, `services`, or both (the default), in that order. */
export function benchModes(env: Record<string, string | undefined> = process.env): BenchMode[] {
  const raw = env.BENCH_MODE ?? 'both';
  if (raw === 'both') return ['plane', 'services'];
  if (raw === 'plane' || raw === 'services') return [raw];
  throw new Error(`BENCH_MODE must be plane, services or both (got ${JSON.stringify(raw)})`);
}

export interface BenchPlane {
  mode: BenchMode;
  /** The gateway's HTTP base URL. */
  base: string;
  /** A client on the plane's bus (setup, and the reference paths a bench measures beside the gateway's). */
  client: BusClient;
  /** The bus `client` is on: the plane's in-process bus, or a connection to its NATS server. */
  transport: BusTransport;
  /** The plane's private NATS server (`services` mode), or null (`plane` mode: the bus is in this process). */
  natsUrl: string | null;
  /** Each service's metrics, for the stage trace. */
  sources: Record<string, MetricsSource>;
  /** The plane's PostgreSQL schema prefix (`<prefix><service>`), for the raw baselines written beside a service's own tables. */
  schemaPrefix: string;
  stop(): Promise<void>;
}

/**
 * Starts the whole plane in `mode` on the real PostgreSQL and Redis (a fresh schema and key prefix) with JWT auth
 * (the test kit's `token()` signs for it), stdio servers allowed, and `env` on top. Nothing reaches a shared bus
 * subject: the plane's bus is in this process or on its own NATS server.
 */
export async function startBenchPlane(mode: BenchMode, env: Record<string, string>): Promise<BenchPlane> {
  const prefix = uniquePrefix();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-bench-'));
  const common: Record<string, string | undefined> = {
    ...process.env,
    NATS_URL: undefined,
    APPHOST_HOME: home,
    APPHOST_HOST: '127.0.0.1',
    APPHOST_DEMO: 'false',
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_SCHEMA_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    REGISTRY_ALLOW_STDIO: 'true',
    ...JWT_GATEWAY_ENV,
    ...env,
  };
  const cleanup = async () => {
    await dropSchemasWithPrefix(prefix);
    fs.rmSync(home, { recursive: true, force: true });
  };
  try {
    const plane = mode === 'plane' ? await inProcess(common, cleanup) : await asProcesses(common, cleanup);
    return { ...plane, schemaPrefix: prefix };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

async function inProcess(env: Record<string, string | undefined>, cleanup: () => Promise<void>): Promise<Omit<BenchPlane, 'schemaPrefix'>> {
  const withPort = { ...env, APPHOST_PORT: '0' };
  const plane = await startPlane(parsePlaneConfig(withPort), withPort);
  return {
    mode: 'plane',
    base: plane.url.replace('localhost', '127.0.0.1'),
    client: new BusClient({ transport: plane.transport, defaultTimeoutMs: 30_000 }),
    transport: plane.transport,
    natsUrl: null,
    sources: Object.fromEntries(plane.services.map((service) => [service.name, () => service.context.metrics.registry.metrics()])),
    stop: async () => {
      await plane.stop();
      await cleanup();
    },
  };
}

async function asProcesses(env: Record<string, string | undefined>, cleanup: () => Promise<void>): Promise<Omit<BenchPlane, 'schemaPrefix'>> {
  const nats = await startPrivateNats();
  const withNats = { ...env, NATS_URL: nats.url, APPHOST_PORT: String(await freePort()) };
  const config = parseServicesConfig(withNats);
  const services = await startServiceProcesses(config, withNats, (line) => process.stderr.write(`${line}\n`)).catch(async (error: unknown) => {
    await nats.stop();
    throw error;
  });
  const transport = await NatsTransport.connect({ servers: nats.url, name: 'bench-client' });
  const probe =
    (port: number): MetricsSource =>
    async () =>
      (await fetch(`http://${config.APPHOST_HOST}:${port}/metrics`)).text();
  return {
    mode: 'services',
    base: `http://${config.APPHOST_HOST}:${config.APPHOST_PORT}`,
    client: new BusClient({ transport, defaultTimeoutMs: 30_000 }),
    transport,
    natsUrl: nats.url,
    sources: Object.fromEntries(services.processes().map((p) => [p.name, probe(p.probePort)])),
    stop: async () => {
      await transport.close();
      await services.stop();
      await nats.stop();
      await cleanup();
    },
  };
}
