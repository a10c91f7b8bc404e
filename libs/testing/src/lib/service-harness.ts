import { BusClient, NatsTransport, type BusTransport } from '@apphost/bus';
import { startService, type RunningService, type ServiceDefinition } from '@apphost/runtime';
import pino from 'pino';
import { TEST_DATABASE_URL, TEST_NATS_URL, TEST_REDIS_URL } from './environment';

export interface ServiceUnderTest {
  running: RunningService;
  transport: BusTransport;
  client: BusClient;
  stop(): Promise<void>;
}

/**
 * Boots one service on the real NATS, PostgreSQL and Redis, isolated by `prefix`, with HTTP on a free port.
 * `env.NATS_URL` points it at another NATS server (for example a private one, see `startPrivateNats`).
 */
export async function bootService(definition: ServiceDefinition, prefix: string, env: Record<string, string> = {}): Promise<ServiceUnderTest> {
  const transport = await NatsTransport.connect({ servers: env.NATS_URL ?? TEST_NATS_URL, name: `test-${definition.name}` });
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
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
