import { z } from 'zod';
import { parseConfig } from '@apphost/runtime';

const ms = (fallback: number) => z.coerce.number().int().min(1).max(600_000).default(fallback);

const schema = z.object({
  GOVERNED_CLASSIFY_TIMEOUT_MS: ms(60_000),
  GOVERNED_CALL_TIMEOUT_MS: ms(60_000),
  GOVERNED_STORE_TIMEOUT_MS: ms(10_000),
  GOVERNED_SEAL_PENDING_TTL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(24 * 3600 * 1000)
    .optional(),
  GOVERNED_CONFIRMATION_TTL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(12 * 3600 * 1000)
    .default(600_000),
  GOVERNED_CONFIRMATION_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(12 * 3600 * 1000)
    .default(3_600_000),
  GOVERNED_DUPLICATE_IN_FLIGHT: z.enum(['wait', 'reject']).default('wait'),
  GOVERNED_CALL_CLAIM_TTL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(7 * 24 * 3600 * 1000)
    .default(24 * 3600 * 1000),
  GOVERNED_OWNER_HEARTBEAT_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
  GOVERNED_VIEW_DEVELOPMENT: z.enum(['true', 'false']).default('false'),
  GOVERNED_VIEW_PRODUCER_TTL_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .max(24 * 3600 * 1000)
    .default(24 * 3600 * 1000),
  GOVERNED_VIEW_READ_TIMEOUT_MS: ms(30_000),
  GOVERNED_VIEW_CLOSED_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(24 * 3600 * 1000)
    .default(3_600_000),
  GOVERNED_VIEW_SWEEP_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  GOVERNED_MESSAGE_PER_VIEW_PER_MINUTE: z.coerce.number().int().min(1).max(600).default(6),
  GOVERNED_MESSAGE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(64 * 1024)
    .default(16 * 1024),
  GOVERNED_MESSAGE_ACCEPT_WITHIN_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
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
  /** A duplicate of a batch still in flight: wait for its event until the deadline, or answer OUTCOME_UNKNOWN at once. */
  duplicateInFlight: 'wait' | 'reject';
  /** How long a batch that ran keeps its call-id claims (the ledger answers retries once its event exists). */
  callClaimTtlMs: number;
  /** How often this process refreshes its liveness key; the key lapses after three missed refreshes. */
  ownerHeartbeatMs: number;
  views: ViewConfig;
  messages: MessageConfig;
}

/** `ui/message`: host limits that hold whatever the profile says (a message starts a model turn). */
export interface MessageConfig {
  /** Messages one View may send a minute (sliding window, on top of the profile's View RPC rate). */
  perViewPerMinute: number;
  /** The most UTF-8 bytes of text one message may carry, over all its blocks. */
  maxBytes: number;
  /** How long a recorded message may wait for its acceptance before the lifecycle-store expires it (a crash in between). */
  acceptWithinMs: number;
}

export interface ViewConfig {
  /** Development hosts: the View CSP accepts loopback origins (`http://localhost`, `http://127.0.0.1`). */
  development: boolean;
  /** How long the producing-generation record of a sealed UI call is kept when its profile cannot be read (else the profile's idempotency retention). */
  producerTtlMs: number;
  /** The bootstrap's one `resources/read` through catalog-policy. */
  readTimeoutMs: number;
  /** How long a closed or revoked View's record stays to answer `get-view` (CLOSED/REVOKED) before it reads as NOT_FOUND. */
  closedRetentionMs: number;
  /** Interval of the sweep that releases references a crash left behind and revokes Views whose lease ran out; 0 = off. */
  sweepMs: number;
}

/** The service's settings (see README.md), shaped into `BatchConfig`; bad values stop startup, naming the variable. */
export const batchConfig = schema.transform((c): BatchConfig => ({
  classifyTimeoutMs: c.GOVERNED_CLASSIFY_TIMEOUT_MS,
  callTimeoutMs: c.GOVERNED_CALL_TIMEOUT_MS,
  storeTimeoutMs: c.GOVERNED_STORE_TIMEOUT_MS,
  pendingTtlMs: c.GOVERNED_SEAL_PENDING_TTL_MS,
  confirmationTtlMs: c.GOVERNED_CONFIRMATION_TTL_MS,
  confirmationRetentionMs: c.GOVERNED_CONFIRMATION_RETENTION_MS,
  duplicateInFlight: c.GOVERNED_DUPLICATE_IN_FLIGHT,
  callClaimTtlMs: c.GOVERNED_CALL_CLAIM_TTL_MS,
  ownerHeartbeatMs: c.GOVERNED_OWNER_HEARTBEAT_MS,
  views: {
    development: c.GOVERNED_VIEW_DEVELOPMENT === 'true',
    producerTtlMs: c.GOVERNED_VIEW_PRODUCER_TTL_MS,
    readTimeoutMs: c.GOVERNED_VIEW_READ_TIMEOUT_MS,
    closedRetentionMs: c.GOVERNED_VIEW_CLOSED_RETENTION_MS,
    sweepMs: c.GOVERNED_VIEW_SWEEP_MS,
  },
  messages: {
    perViewPerMinute: c.GOVERNED_MESSAGE_PER_VIEW_PER_MINUTE,
    maxBytes: c.GOVERNED_MESSAGE_MAX_BYTES,
    acceptWithinMs: c.GOVERNED_MESSAGE_ACCEPT_WITHIN_MS,
  },
}));

/** Parses the service's settings alone (tests); a service gets them in `context.config`. */
export function parseBatchConfig(env: Record<string, string | undefined>): BatchConfig {
  return parseConfig('governed-operations', batchConfig, env);
}
