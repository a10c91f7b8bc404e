import { createCoordinationStore, type CoordinationStore } from '@apphost/coordination';
import { openServiceDatabase, type EntityTarget, type MigrationClass, type ServiceDatabase } from '@apphost/persistence';
import type { ServiceContext } from './service-definition';

export interface PostgresStoreOptions {
  /** The service's own schema; the configured prefix is prepended. */
  schema: string;
  migrations: MigrationClass[];
  entities?: EntityTarget[];
}

/** Opens the service's own PostgreSQL schema and runs its migrations (DATABASE_URL is checked at startup). */
export function openPostgresStore(context: ServiceContext, options: PostgresStoreOptions): Promise<ServiceDatabase> {
  const url = context.config.DATABASE_URL;
  if (!url) throw new Error(`${context.service}: DATABASE_URL is not configured`);
  return openServiceDatabase({
    url,
    schema: `${context.config.DATABASE_SCHEMA_PREFIX}${options.schema}`,
    serviceName: context.service,
    migrations: options.migrations,
    entities: options.entities,
    logger: context.logger,
    pingTimeoutMs: context.config.STORE_PING_TIMEOUT_MS,
  });
}

/** Redis when REDIS_URL is set, otherwise the in-memory store of the all-in-one plane. */
export function openCoordinationStore(context: ServiceContext): Promise<CoordinationStore> {
  return Promise.resolve(
    createCoordinationStore({
      url: context.config.REDIS_URL,
      keyPrefix: `apphost:${context.config.DATABASE_SCHEMA_PREFIX}${context.service}:`,
      name: context.service,
    }),
  );
}
