import type { Logger } from 'typeorm';
import type { PersistenceLogger } from './options';
import { redactText } from '@apphost/redact';

/**
 * Routes TypeORM's own output (migration progress, pool warnings) to the service logger instead of the
 * console, where TypeORM prints migration lines even with `logging: false`. Queries are not logged.
 */
export function typeormLogger(logger: PersistenceLogger | undefined, context: object, secrets: readonly string[]): Logger {
  const text = (message: unknown): string => redactText(message instanceof Error ? message.message : String(message), secrets);
  return {
    logQuery: () => undefined,
    logQueryError: () => undefined, // the error reaches the caller, who decides whether it is news
    logQuerySlow: () => undefined,
    logSchemaBuild: () => undefined,
    logMigration: (message) => logger?.info({ ...context, component: 'typeorm' }, text(message)),
    log: (level, message) => {
      if (level === 'warn') logger?.warn({ ...context, component: 'typeorm' }, text(message));
    },
  };
}
