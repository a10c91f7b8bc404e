import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InProcessTransport, NatsTransport, type BusTransport } from '@apphost/bus';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@apphost/persistence';
import { createLogger, startService, startTracing, type RunningService } from '@apphost/runtime';
import { demoEnv, loadDemo, registerDemo } from './demo';
import type { PlaneConfig } from './plane-config';
import { loadServiceDefinitions } from './services';

export interface RunningPlane {
  url: string;
  tokenFile: string;
  /** The reference host page (`<url>/host/`). */
  hostUrl: string;
  /** Whether the example profile and toolsets were registered (development, unless APPHOST_DEMO=false). */
  demo: boolean;
  /** The bus every service of the plane is on (in-process unless NATS_URL is set): tools and benches talk to it. */
  transport: BusTransport;
  /** The running services, in start order. */
  services: readonly RunningService[];
  /** Services in reverse start order (gateway first), the embedded database last. */
  stop(): Promise<void>;
}

/**
 * Every service in one process: the in-process bus, embedded PostgreSQL in `<home>/pg` and the in-memory
 * coordination store, unless NATS_URL, DATABASE_URL or REDIS_URL point at real ones.
 */
export async function startPlane(config: PlaneConfig, env: Record<string, string | undefined>): Promise<RunningPlane> {
  // Searchable (not listable) by others: when run as root, PostgreSQL runs as the postgres user and keeps its data in
  // <home>/pg if it can reach it, else under /var/lib/apphost, recorded in <home>/pg.location.
  fs.mkdirSync(config.home, { recursive: true, mode: 0o711 });
  fs.chmodSync(config.home, 0o711);
  const instanceId = `plane-${randomBytes(3).toString('hex')}`;
  const logger = createLogger('plane', instanceId, config.LOG_LEVEL);
  const cleanups: Array<() => Promise<void>> = [];
  const running: RunningService[] = [];
  let database: EmbeddedPostgres | undefined;
  // Reverse start order (gateway first), then the bus and tracing, the database last: services record their
  // state in it while they stop.
  const stop = async () => {
    for (const service of running.reverse()) await service.close().catch((err: unknown) => logger.error({ err }, `${service.name} did not stop cleanly`));
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => logger.error({ err }, 'cleanup failed'));
    await database?.stop().catch((err: unknown) => logger.error({ err }, 'embedded postgres did not stop cleanly'));
  };

  try {
    const tracing = startTracing('apphost-plane', config);
    cleanups.push(() => tracing.shutdown());
    const transport: BusTransport = config.NATS_URL
      ? await NatsTransport.connect({ servers: config.NATS_URL.split(','), name: `apphost-plane/${instanceId}`, subjectPrefix: config.BUS_SUBJECT_PREFIX })
      : new InProcessTransport(undefined, config.BUS_SUBJECT_PREFIX);
    cleanups.push(() => transport.close());

    let databaseUrl = config.DATABASE_URL;
    if (!databaseUrl) {
      database = await startEmbeddedPostgres({ dataDir: path.join(config.home, 'pg'), logger });
      databaseUrl = database.url;
    }

    const tokenFile = path.join(config.home, 'dev-token');
    const development = (env.AUTH_MODE ?? 'development') === 'development';
    const demo = config.APPHOST_DEMO && development ? loadDemo() : undefined;
    const serviceEnv = {
      ...env,
      ...(demo ? demoEnv(demo, env) : {}),
      DATABASE_URL: databaseUrl,
      REDIS_URL: config.REDIS_URL,
      INSTANCE_ID: instanceId,
      LOG_LEVEL: config.LOG_LEVEL,
      HTTP_HOST: config.APPHOST_HOST,
      HTTP_PORT: String(config.APPHOST_PORT),
      AUTH_MODE: env.AUTH_MODE ?? 'development',
      AUTH_DEV_TOKEN_FILE: env.AUTH_DEV_TOKEN_FILE ?? tokenFile,
      // A development plane serves Views from loopback servers too: their declared loopback origins enter the View CSP
      // (production keeps https only), the same mode in which the gateway's own origin is allowlisted.
      GOVERNED_VIEW_DEVELOPMENT: env.GOVERNED_VIEW_DEVELOPMENT ?? (development ? 'true' : 'false'),
      // Deleting a session purges what the other stores keep for it (each service that keeps session state is a participant);
      // binding-registry ends the session's MCP connections, so their server processes exit at once.
      LIFECYCLE_CASCADE_PARTICIPANTS: env.LIFECYCLE_CASCADE_PARTICIPANTS ?? 'governed-operations,sealed-result-store,export-audit,binding-registry',
    };
    let url = '';
    for (const definition of loadServiceDefinitions()) {
      const isGateway = definition.name === 'gateway';
      const service = await startService(definition, { env: serviceEnv, transport, http: isGateway, processMetrics: isGateway, logger });
      running.push(service);
      if (isGateway) url = service.url!.replace('[::1]', 'localhost');
    }
    // After the gateway: binding a toolset to the demo profile probes the profile's providers, the gateway among them.
    if (demo) await registerDemo(demo, transport);
    return { url, hostUrl: `${url}/host/`, tokenFile: serviceEnv.AUTH_DEV_TOKEN_FILE, demo: demo !== undefined, transport, services: [...running], stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
