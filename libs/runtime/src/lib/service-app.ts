import { Module, type DynamicModule, type INestApplicationContext, type Type } from '@nestjs/common';
import { APP_INTERCEPTOR, NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { BusClient, BusModule, type BusTransport } from '@apphost/bus';
import type { ServiceName } from '@apphost/contracts';
import { connectionFailureOf } from '@apphost/persistence';
import { ConfigError, parseServiceConfig, withoutEmpty, type CommonConfig } from './config';
import { correlationMiddleware } from './correlation';
import { DescribeRegistrar } from './describe.registrar';
import { httpMetricsMiddleware } from './http-metrics.middleware';
import { createLogger, PinoNestLogger, type Logger } from './logger';
import { ServiceMetrics } from './metrics';
import { OpsController } from './ops.controller';
import { ReadinessService } from './readiness';
import { RequestContextInterceptor } from './request-context.interceptor';
import { RoutedServicesProbe } from './routed-services';
import { ROUTED_SERVICES, SERVICE_CONTEXT, SERVICE_STORES } from './runtime.tokens';
import type { ServiceContext, ServiceDefinition, StoreHandle } from './service-definition';

export interface HostOptions {
  env: Record<string, string | undefined>;
  transport: BusTransport;
  /** Serve HTTP (ops endpoints, and the gateway's API). The all-in-one plane serves HTTP from the gateway only. */
  http: boolean;
  /** Collect process metrics (once per process). */
  processMetrics: boolean;
  logger?: Logger;
}

export interface RunningService {
  name: ServiceName;
  context: ServiceContext;
  app: INestApplicationContext;
  /** The bound HTTP address, when serving HTTP. */
  url?: string;
  close(): Promise<void>;
}

/**
 * The service's whole configuration from one environment (its port default applied): every problem in one
 * ConfigError. `standalone` adds what a pod must have (NATS and the stores it requires).
 */
export function loadServiceConfig<C extends object>(
  definition: ServiceDefinition<C>,
  env: Record<string, string | undefined>,
  standalone = false,
): CommonConfig & C {
  const withDefaults = { HTTP_PORT: definition.defaultHttpPort?.toString(), ...withoutEmpty(env) };
  return parseServiceConfig(definition.name, definition.config, withDefaults, (common) => (standalone ? standaloneProblems(definition, common) : []));
}

/** Builds, wires and starts one service on a given transport. Stores open first, so a bad store fails startup. */
export async function startService<C extends object>(definition: ServiceDefinition<C>, options: HostOptions): Promise<RunningService> {
  const config = loadServiceConfig(definition, options.env);
  if (options.transport.subjectPrefix !== config.BUS_SUBJECT_PREFIX) {
    throw new ConfigError(definition.name, [
      `BUS_SUBJECT_PREFIX: ${JSON.stringify(config.BUS_SUBJECT_PREFIX)} but the transport serves ${JSON.stringify(options.transport.subjectPrefix)}`,
    ]);
  }
  const logger = options.logger?.child({ service: definition.name }) ?? createLogger(definition.name, config.INSTANCE_ID, config.LOG_LEVEL);
  const context: ServiceContext<C> = {
    service: definition.name,
    config,
    transport: options.transport,
    logger,
    metrics: new ServiceMetrics(definition.name, { processMetrics: options.processMetrics }),
  };
  const stores = (await definition.openStores?.(context)) ?? [];
  try {
    const root = rootModule(definition, context, stores, (await definition.imports?.(context, stores)) ?? []);
    const nestLogger = new PinoNestLogger(logger);
    let url: string | undefined;
    let app: INestApplicationContext;
    if (options.http) {
      const httpApp = await NestFactory.create<NestExpressApplication>(root, { logger: nestLogger, abortOnError: false });
      // Express would hash every answer it sends for an ETag (SHA-1 of a View's whole document, of every batch answer);
      // the answers are per-caller and uncacheable, and constant files set their own ETag.
      httpApp.disable('etag');
      httpApp.use(correlationMiddleware(), httpMetricsMiddleware(context.metrics));
      definition.configureHttp?.(httpApp, context);
      await httpApp.listen(config.HTTP_PORT, config.HTTP_HOST);
      url = await httpApp.getUrl();
      app = httpApp;
    } else {
      app = await NestFactory.createApplicationContext(root, { logger: nestLogger, abortOnError: false });
      await app.init();
    }
    logger.info({ url, transport: options.transport.kind }, 'service started');
    return {
      name: definition.name,
      context,
      app,
      url,
      close: async () => {
        await app.close();
        await closeStores(stores, logger);
        logger.info('service stopped');
      },
    };
  } catch (error) {
    await closeStores(stores, logger);
    throw error;
  }
}

function rootModule<C extends object>(
  definition: ServiceDefinition<C>,
  context: ServiceContext<C>,
  stores: StoreHandle[],
  imports: Array<Type | DynamicModule>,
): DynamicModule {
  @Module({})
  class ServiceRootModule {}
  return {
    module: ServiceRootModule,
    imports: [
      BusModule.forRoot({
        transport: context.transport,
        instanceId: context.config.INSTANCE_ID,
        queueGroup: definition.name,
        service: definition.name,
        defaultTimeoutMs: context.config.BUS_TIMEOUT_MS,
        shutdownGraceMs: context.config.SHUTDOWN_GRACE_MS,
        maxPayloadBytes: context.config.BUS_MAX_PAYLOAD_BYTES,
        logger: context.logger,
        metrics: context.metrics.bus,
        // One mapping for every route: a PostgreSQL connection failure is UNAVAILABLE (retryable), never INTERNAL.
        classifyError: connectionFailureOf,
      }),
      ...imports,
    ],
    controllers: [OpsController],
    providers: [
      { provide: SERVICE_CONTEXT, useValue: context },
      { provide: SERVICE_STORES, useValue: stores },
      ...(definition.routesTo?.length
        ? [{ provide: ROUTED_SERVICES, inject: [BusClient], useFactory: (bus: BusClient) => new RoutedServicesProbe(bus, definition.routesTo ?? []) }]
        : []),
      ReadinessService,
      DescribeRegistrar,
      { provide: APP_INTERCEPTOR, useClass: RequestContextInterceptor },
    ],
    exports: [SERVICE_CONTEXT, SERVICE_STORES, ReadinessService],
    global: true,
  };
}

async function closeStores(stores: StoreHandle[], logger: Logger): Promise<void> {
  for (const store of stores) {
    await store.close().catch((err: unknown) => logger.warn({ err }, 'store did not close cleanly'));
  }
}

function standaloneProblems(definition: Pick<ServiceDefinition, 'requires'>, config: CommonConfig): string[] {
  const problems: string[] = [];
  if (!config.NATS_URL) problems.push('NATS_URL: required when a service runs on its own');
  if (definition.requires.includes('postgres') && !config.DATABASE_URL) problems.push('DATABASE_URL: required by this service');
  if (definition.requires.includes('redis') && !config.REDIS_URL) problems.push('REDIS_URL: required by this service');
  return problems;
}

/** The stores a standalone deployment must configure for this service (the manifests are checked against it). */
export function requireStores(definition: Pick<ServiceDefinition, 'name' | 'requires'>, config: CommonConfig): void {
  const problems = standaloneProblems(definition, config).filter((p) => !p.startsWith('NATS_URL'));
  if (problems.length) throw new ConfigError(definition.name, problems);
}
