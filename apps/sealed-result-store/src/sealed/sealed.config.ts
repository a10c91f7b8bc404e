import { z } from 'zod';
import { SEALED_CHUNK_BYTES, SEALED_INLINE_MAX_BYTES, SEALED_MAX_CANONICAL_BYTES, SEALED_MAX_CHUNKS, SEALED_MAX_DEPTH } from '@apphost/contracts';
import { parseConfig } from '@apphost/runtime';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Settings of the sealed-result store, read once from the environment at startup. */
export const sealedConfigSchema = z.object({
  /** Canonical size limit of one envelope (default 8 MiB); at most what the chunk protocol can carry. */
  SEALED_MAX_BYTES: int(1024, SEALED_MAX_CHUNKS * SEALED_CHUNK_BYTES).default(SEALED_MAX_CANONICAL_BYTES),
  SEALED_MAX_DEPTH: int(2, 1000).default(SEALED_MAX_DEPTH),
  /** How long a PENDING record waits for its commit before GC may collect it (callers may ask for less or more). */
  SEALED_PENDING_TTL_MS: int(0, 24 * 60 * 60 * 1000).default(15 * 60 * 1000),
  /** How long a staged chunked upload may take from begin to finish. */
  SEALED_UPLOAD_TTL_MS: int(1000, 24 * 60 * 60 * 1000).default(10 * 60 * 1000),
  /** Period of the background collector; 0 disables it (the `gc` operation still works). */
  SEALED_GC_INTERVAL_MS: int(0, 24 * 60 * 60 * 1000).default(60 * 1000),
  SEALED_GC_BATCH: int(1, 100_000).default(1000),
  /** How old a PENDING record must be before the recovery pass asks the ledger whether an event references it. */
  SEALED_RECOVER_AFTER_MS: int(0, 24 * 60 * 60 * 1000).default(30 * 1000),
  /** How long GC and the recovery pass wait for the ledger's answer (no answer: nothing is deleted). */
  SEALED_LEDGER_TIMEOUT_MS: int(100, 60 * 1000).default(5000),
});

export interface SealedConfig {
  maxBytes: number;
  maxDepth: number;
  pendingTtlMs: number;
  uploadTtlMs: number;
  gcIntervalMs: number;
  gcBatch: number;
  recoverAfterMs: number;
  ledgerTimeoutMs: number;
  /** Chunk size and inline threshold are protocol constants, kept here so tests and the service share them. */
  chunkBytes: number;
  inlineMaxBytes: number;
}

/** The schema a service definition parses: the variables above, shaped into `SealedConfig`. */
export const sealedConfig = sealedConfigSchema.transform((c): SealedConfig => ({
  maxBytes: c.SEALED_MAX_BYTES,
  maxDepth: c.SEALED_MAX_DEPTH,
  pendingTtlMs: c.SEALED_PENDING_TTL_MS,
  uploadTtlMs: c.SEALED_UPLOAD_TTL_MS,
  gcIntervalMs: c.SEALED_GC_INTERVAL_MS,
  gcBatch: c.SEALED_GC_BATCH,
  recoverAfterMs: c.SEALED_RECOVER_AFTER_MS,
  ledgerTimeoutMs: c.SEALED_LEDGER_TIMEOUT_MS,
  chunkBytes: SEALED_CHUNK_BYTES,
  inlineMaxBytes: SEALED_INLINE_MAX_BYTES,
}));

/** Parses the store's settings alone (tests); a service gets them in `context.config`. */
export function parseSealedConfig(env: Record<string, string | undefined>): SealedConfig {
  return parseConfig('sealed-result-store', sealedConfig, env);
}
