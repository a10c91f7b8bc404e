import { z } from 'zod';

const ms = (fallback: number) => z.coerce.number().int().min(1).max(600_000).default(fallback);

const schema = z.object({
  GOVERNED_CLASSIFY_TIMEOUT_MS: ms(60_000),
  GOVERNED_CALL_TIMEOUT_MS: ms(60_000),
  GOVERNED_STORE_TIMEOUT_MS: ms(10_000),
  GOVERNED_SEAL_PENDING_TTL_MS: z.coerce.number().int().min(0).max(24 * 3600 * 1000).optional(),
  GOVERNED_CONFIRMATION_TTL_MS: z.coerce.number().int().min(1_000).max(12 * 3600 * 1000).default(600_000),
  GOVERNED_CONFIRMATION_RETENTION_MS: z.coerce.number().int().min(0).max(12 * 3600 * 1000).default(3_600_000),
});

export interface BatchConfig {
  classifyTimeoutMs: number;
  callTimeoutMs: number;
  storeTimeoutMs: number;
  pendingTtlMs?: number;
  /** How long a confirmation permit waits for the user's decision. */
  confirmationTtlMs: number;
  /** How long an expired permit is kept, so a late decision is told "expired" (and the model gets a response). */
  confirmationRetentionMs: number;
}

/** The batch pipeline's settings (see README.md); bad values stop startup. */
export function parseBatchConfig(env: Record<string, string | undefined>): BatchConfig {
  const clean = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('GOVERNED_') && v !== undefined && v !== ''));
  const parsed = schema.safeParse(clean);
  if (!parsed.success) throw new Error(`governed-operations: invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const c = parsed.data;
  return {
    classifyTimeoutMs: c.GOVERNED_CLASSIFY_TIMEOUT_MS,
    callTimeoutMs: c.GOVERNED_CALL_TIMEOUT_MS,
    storeTimeoutMs: c.GOVERNED_STORE_TIMEOUT_MS,
    pendingTtlMs: c.GOVERNED_SEAL_PENDING_TTL_MS,
    confirmationTtlMs: c.GOVERNED_CONFIRMATION_TTL_MS,
    confirmationRetentionMs: c.GOVERNED_CONFIRMATION_RETENTION_MS,
  };
}
