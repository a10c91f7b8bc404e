import { BusClient, NatsTransport, type BusTransport } from '@apphost/bus';
import { startService, type RunningService, type ServiceDefinition } from '@apphost/runtime';
import { createLogger } from '@apphost/runtime';
import { TEST_BUS_PREFIX, TEST_DATABASE_URL, TEST_NATS_URL, TEST_REDIS_URL } from './environment';

/** The one way a test connects to NATS: inside its own bus namespace (this file's, unless told otherwise). */
export function connectTestTransport(name: string, options: { natsUrl?: string; subjectPrefix?: string } = {}): Promise<NatsTransport> {
  return NatsTransport.connect({ servers: options.natsUrl ?? TEST_NATS_URL, name, subjectPrefix: options.subjectPrefix ?? TEST_BUS_PREFIX });
}

let capture: { level: string; lines: Record<string, unknown>[] } | undefined;

/**
 * Collects, in memory, the log lines of every service booted from now on (at `level`), parsed: a test can find
 * one request's correlation id in each service's lines. `stop()` ends collecting for services booted later.
 */
export function captureServiceLogs(level = 'debug'): { lines: Record<string, unknown>[]; stop(): void } {
  const current = { level, lines: [] as Record<string, unknown>[] };
  capture = current;
  return { lines: current.lines, stop: () => (capture = capture === current ? undefined : capture) };
}

/** Test logs: silent unless TEST_LOG_LEVEL asks (or `captureServiceLogs` collects), tagged like a service's. */
export function testLogger(name = 'test') {
  const sink = capture;
  if (!sink) return createLogger(name, 'test', process.env.TEST_LOG_LEVEL ?? 'silent');
  return createLogger(name, 'test', sink.level, { write: (line: string) => void sink.lines.push(JSON.parse(line) as Record<string, unknown>) });
}

export interface ServiceUnderTest {
  running: RunningService;
  transport: BusTransport;
  client: BusClient;
  stop(): Promise<void>;
}

/**
 * Boots one service on the real NATS, PostgreSQL and Redis, isolated by `prefix` (schemas, keys) and by the test
 * file's bus namespace (`env.BUS_SUBJECT_PREFIX` overrides it), with HTTP on a free port. `env.NATS_URL` points it
 * at another NATS server (for example a private one, see `startPrivateNats`).
 */
export async function bootService<C extends object>(
  definition: ServiceDefinition<C>,
  prefix: string,
  env: Record<string, string> = {},
): Promise<ServiceUnderTest> {
  const subjectPrefix = env.BUS_SUBJECT_PREFIX ?? TEST_BUS_PREFIX;
  const transport = await connectTestTransport(`test-${definition.name}`, { natsUrl: env.NATS_URL, subjectPrefix });
  const logger = testLogger(definition.name);
  try {
    const running = await startService(definition, {
      env: {
        DATABASE_URL: TEST_DATABASE_URL,
        REDIS_URL: TEST_REDIS_URL,
        DATABASE_SCHEMA_PREFIX: prefix,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: '0',
        SHUTDOWN_GRACE_MS: '2000',
        ...env,
        BUS_SUBJECT_PREFIX: subjectPrefix,
      },
      transport,
      http: true,
      processMetrics: false,
      logger,
    });
    return {
      running,
      transport,
      client: new BusClient({ transport, defaultTimeoutMs: 5000 }),
      stop: async () => {
        await running.close();
        await transport.close();
      },
    };
  } catch (error) {
    await transport.close();
    throw error;
  }
}
