import { NatsTransport } from '@apphost/bus';
import { ConfigError } from './config';
import { createLogger } from './logger';
import { loadServiceConfig, startService } from './service-app';
import type { ServiceDefinition } from './service-definition';
import { startTracing } from './tracing';

/**
 * The entry point of one service in its own process (a Kubernetes pod): real NATS, real stores, HTTP for
 * probes and metrics. Exits 2 with every problem listed on bad configuration; drains and exits 0 on SIGTERM.
 */
export async function runStandalone<C extends object>(definition: ServiceDefinition<C>, env: Record<string, string | undefined> = process.env): Promise<void> {
  let config;
  try {
    config = loadServiceConfig(definition, env, true);
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(2);
  }
  const logger = createLogger(definition.name, config.INSTANCE_ID, config.LOG_LEVEL);
  const tracing = startTracing(definition.name, config);
  let transport: NatsTransport;
  try {
    transport = await NatsTransport.connect({
      servers: config.NATS_URL!.split(','),
      name: `${definition.name}/${config.INSTANCE_ID}`,
      subjectPrefix: config.BUS_SUBJECT_PREFIX,
    });
  } catch (error) {
    logger.fatal({ err: error }, 'cannot connect to NATS');
    process.exit(1);
  }
  let running;
  try {
    running = await startService(definition, { env: { ...env, INSTANCE_ID: config.INSTANCE_ID }, transport, http: true, processMetrics: true, logger });
  } catch (error) {
    logger.fatal({ err: error }, error instanceof ConfigError ? error.message : 'service failed to start');
    await transport.close();
    process.exit(error instanceof ConfigError ? 2 : 1);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await running.close();
    await transport.close();
    await tracing.shutdown();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
