import { createHash } from 'node:crypto';
import { z } from 'zod';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * The development principal key: derived from a fixed label, so a plane without EXPORT_PRINCIPAL_KEY still gets
 * stable digests. It is public (this file), so digests made with it only pseudonymize: production sets its own key.
 */
export const DEVELOPMENT_PRINCIPAL_KEY = createHash('sha256').update('apphost export-audit development principal key').digest('base64');

/** export-audit's own settings (README "Configuration"); bad values stop startup, naming the variable. */
export const exportAuditConfigSchema = z.object({
  /** The HMAC key of the principal digest (base64, ≥ 32 bytes). Unset: the derived development key. */
  EXPORT_PRINCIPAL_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length >= 32, 'must be base64 of at least 32 bytes')
    .default(DEVELOPMENT_PRINCIPAL_KEY),
  /** How long an audit row is kept after its attempt (the retention purge deletes it after that). */
  EXPORT_RETENTION_DAYS: int(1, 3650).default(90),
  /** What the session-delete cascade does with the session's rows: keep them (redacted) until retention, or delete them. */
  EXPORT_CASCADE_RETENTION: z.enum(['keep', 'delete']).default('keep'),
  /** How often the retention purge runs (0: never; tests call it). */
  EXPORT_PURGE_INTERVAL_MS: int(0, 24 * 3600 * 1000).default(3600 * 1000),
  /** How long an export permit is held at most (an export that takes longer is denied at release). */
  EXPORT_PERMIT_TTL_MS: int(1000, 600_000).default(60_000),
  /** Timeout of each request export-audit makes to another service. */
  EXPORT_BUS_TIMEOUT_MS: int(100, 120_000).default(10_000),
});
export type ExportAuditConfig = z.infer<typeof exportAuditConfigSchema>;
