import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { DEFAULT_MAX_PAYLOAD_BYTES, SubjectNamespace } from '@apphost/bus';
import { instanceIdSchema } from '@apphost/contracts';

/** Bad configuration stops the process at startup with every problem listed, never later. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    readonly service: string,
    readonly problems: string[],
  ) {
    super(`invalid configuration for ${service}:\n  - ${problems.join('\n  - ')}`);
  }
}

const intFromEnv = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL with protocol ${protocols.join(' or ')}`,
  );

/** Settings every service shares, read from the environment once. */
export const commonConfigSchema = z.object({
  NATS_URL: z.string().min(1).optional(),
  DATABASE_URL: url(['postgres:', 'postgresql:']).optional(),
  /** Prepended to each service's schema name, so several planes (or test runs) can share one database. */
  DATABASE_SCHEMA_PREFIX: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,30}$/)
    .default(''),
  REDIS_URL: url(['redis:', 'rediss:']).optional(),
  HTTP_HOST: z.string().min(1).default('0.0.0.0'),
  HTTP_PORT: intFromEnv(0, 65535).default(3000),
  INSTANCE_ID: instanceIdSchema.optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BUS_TIMEOUT_MS: intFromEnv(1, 600_000).default(5000),
  /** Namespace of every bus subject and queue group: empty in production; each test harness sets its own. */
  BUS_SUBJECT_PREFIX: z.string().regex(SubjectNamespace.PATTERN, 'must be one NATS token (letters, digits, _ or -)').default(''),
  /** The deadline an HTTP request gets (a caller's `x-apphost-timeout-ms` may only shorten it); it bounds every bus hop. */
  HTTP_REQUEST_TIMEOUT_MS: intFromEnv(100, 600_000).default(120_000),
  BUS_MAX_PAYLOAD_BYTES: intFromEnv(1024, 64 * 1024 * 1024).default(DEFAULT_MAX_PAYLOAD_BYTES),
  SHUTDOWN_GRACE_MS: intFromEnv(0, 600_000).default(10_000),
  /** Bound on each PostgreSQL readiness ping: well under the manifests' 2 s probe timeout, so a hung store answers not-ready. */
  STORE_PING_TIMEOUT_MS: intFromEnv(50, 60_000).default(1000),
  /** OTLP/HTTP collector; spans are exported only when it is set. */
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http:', 'https:']).optional(),
});
export type CommonConfig = z.infer<typeof commonConfigSchema> & { INSTANCE_ID: string };

/** An empty variable means "unset", as in most deployment tooling. */
export function withoutEmpty(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
}

/** One line per problem, naming the variable: `REGISTRY_HOST_KEY: must decode to at least 32 bytes`. */
export function configProblems(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
}

export function parseConfig<S extends z.ZodType>(service: string, schema: S, env: Record<string, string | undefined>): z.output<S> {
  const result = schema.safeParse(withoutEmpty(env));
  if (result.success) return result.data;
  throw new ConfigError(service, configProblems(result.error));
}

/**
 * The common settings and the service's own, parsed once from one environment into one typed value; every
 * problem of both (and `extraProblems`, such as a store the deployment must configure) goes into one ConfigError.
 */
export function parseServiceConfig<C extends object>(
  service: string,
  own: z.ZodType<C> | undefined,
  env: Record<string, string | undefined>,
  extraProblems: (common: CommonConfig) => string[] = () => [],
): CommonConfig & C {
  const clean = withoutEmpty(env);
  const common = commonConfigSchema.safeParse(clean);
  const mine = own?.safeParse(clean);
  const problems = [...(common.success ? [] : configProblems(common.error)), ...(mine && !mine.success ? configProblems(mine.error) : [])];
  const commonConfig = common.success ? { ...common.data, INSTANCE_ID: common.data.INSTANCE_ID ?? defaultInstanceId() } : undefined;
  if (commonConfig) problems.push(...extraProblems(commonConfig));
  if (problems.length || !commonConfig) throw new ConfigError(service, problems);
  return { ...commonConfig, ...(mine?.success ? mine.data : ({} as C)) };
}

export function parseCommonConfig(service: string, env: Record<string, string | undefined>): CommonConfig {
  return parseServiceConfig<object>(service, undefined, env);
}

/** A blank variable counts as unset, so its default applies (a preprocess step of a variable's schema). */
export const blankToUndefined = (value: unknown): unknown => (typeof value === 'string' && value.trim() === '' ? undefined : value);

/** The entries of a comma-separated value: trimmed, empty ones dropped, each once, in first-seen order. */
export function commaList(raw: string | undefined): string[] {
  return [
    ...new Set(
      (raw ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
}

/** A JSON-valued variable, parsed inside a schema so a bad value is one more listed problem naming the variable. */
export function jsonVariable<S extends z.ZodType>(schema: S, message: string) {
  return z.string().transform((text, ctx): z.output<S> => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  });
}

/** Pod names are unique per replica; the random suffix keeps two local processes apart too. */
function defaultInstanceId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9_-]/g, '-')
      .slice(0, 40) || 'host';
  return `${host}-${randomBytes(3).toString('hex')}`;
}
