import path from 'node:path';
import { z } from 'zod';
import { commonConfigSchema, parseConfig } from '@apphost/runtime';

/** The all-in-one plane's own settings; each service still parses its own config from the same environment. */
const planeConfigSchema = z.object({
  APPHOST_HOST: z.string().min(1).default('127.0.0.1'),
  APPHOST_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  APPHOST_HOME: z.string().min(1).default('.apphost'),
  NATS_URL: z.string().min(1).optional(),
  DATABASE_URL: z.string().min(1).optional(),
  REDIS_URL: z.string().min(1).optional(),
  BUS_SUBJECT_PREFIX: commonConfigSchema.shape.BUS_SUBJECT_PREFIX,
  OTEL_EXPORTER_OTLP_ENDPOINT: commonConfigSchema.shape.OTEL_EXPORTER_OTLP_ENDPOINT,
  /** Development only: register the example profile and toolsets (and allow exactly their stdio servers) at start. */
  APPHOST_DEMO: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type PlaneConfig = z.infer<typeof planeConfigSchema> & { home: string };

export function parsePlaneConfig(env: Record<string, string | undefined>): PlaneConfig {
  const config = parseConfig('apphost plane', planeConfigSchema, env);
  return { ...config, home: path.resolve(config.APPHOST_HOME) };
}
