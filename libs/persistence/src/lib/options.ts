import { z } from 'zod';
import { AppHostError, describeIssues } from '@apphost/contracts';
import type { EntitySchema, MigrationInterface } from 'typeorm';
import { STORE_IDENTITY_MIGRATION } from './store-identity.migration';

/** A TypeORM migration class; its name (class name or `name` field) must end in a 13-digit timestamp. */
export type MigrationClass = new () => MigrationInterface;
/** An entity class or an EntitySchema. */
export type EntityTarget = (abstract new (...args: never[]) => object) | EntitySchema;

/** The pino-shaped subset the library logs through. */
export interface PersistenceLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface OpenServiceDatabaseOptions {
  /** postgres:// or postgresql:// URL; its password never appears in messages or logs. */
  url: string;
  /** The service's own schema: holds its tables, its `migrations` table and its `store_identity`. */
  schema: string;
  serviceName: string;
  migrations: MigrationClass[];
  entities?: EntityTarget[];
  poolSize?: number;
  logger?: PersistenceLogger;
  /** Bound on establishing any connection (default 10 s). */
  connectTimeoutMs?: number;
  /** Bound on waiting for another replica's migration lock (default 120 s). */
  migrationLockTimeoutMs?: number;
  /** Bound on the readiness ping (default 1 s, under the probe timeout): past it the store reports not ready. */
  pingTimeoutMs?: number;
}

const isFunction = (value: unknown): boolean => typeof value === 'function';
const isLogger = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && ['info', 'warn', 'error'].every((k) => isFunction((value as Record<string, unknown>)[k]));

/** The migration's name as TypeORM will see it. */
export function migrationName(migration: MigrationClass): string {
  return new migration().name ?? migration.name;
}

const migrationSchema = z.custom<MigrationClass>(isFunction, 'must be a migration class').superRefine((migration, ctx) => {
  let name: string;
  try {
    name = migrationName(migration);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `cannot be constructed: ${error instanceof Error ? error.message : String(error)}` });
    return;
  }
  if (!/\d{13}$/.test(name)) ctx.addIssue({ code: 'custom', message: `migration name "${name}" must end in a 13-digit timestamp` });
  if (name === STORE_IDENTITY_MIGRATION) ctx.addIssue({ code: 'custom', message: `migration name "${name}" is reserved by the library` });
});

export const openOptionsSchema = z.object({
  // Syntax only; a well-formed URL that leads nowhere is UNAVAILABLE, found when connecting.
  url: z.string().refine((url) => /^postgres(ql)?:\/\/[^\s]+$/i.test(url) && URL.canParse(url), 'must be a postgres:// or postgresql:// URL'),
  schema: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must match /^[a-z_][a-z0-9_]{0,62}$/')
    // PostgreSQL reserves pg_* for itself and information_schema is the SQL catalogue.
    .refine((s) => !s.startsWith('pg_') && s !== 'information_schema', 'is reserved by PostgreSQL'),
  serviceName: z.string().min(1).max(200),
  migrations: z.array(migrationSchema).refine((list) => new Set(list.map(migrationName)).size === list.length, 'migration names must be unique'),
  entities: z.array(z.custom<EntityTarget>((v) => isFunction(v) || (typeof v === 'object' && v !== null), 'must be an entity')).optional(),
  poolSize: z.number().int().min(1).max(1000).optional(),
  logger: z.custom<PersistenceLogger>(isLogger, 'must have info, warn and error methods').optional(),
  connectTimeoutMs: z.number().int().min(100).optional(),
  migrationLockTimeoutMs: z.number().int().min(100).optional(),
  pingTimeoutMs: z.number().int().min(50).max(60_000).optional(),
});

/** Validates options at the library boundary; nothing touches the database before this passes. */
export function parseOpenOptions(input: OpenServiceDatabaseOptions): z.infer<typeof openOptionsSchema> {
  const parsed = openOptionsSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = describeIssues(parsed.error);
  throw new AppHostError('INVALID_ARGUMENT', `invalid persistence options: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
    details: { issues },
  });
}
