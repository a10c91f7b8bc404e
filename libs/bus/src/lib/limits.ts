/** Just under NATS' 1 MiB default `max_payload`, leaving room for headers. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024 - 8 * 1024;

/** A reply over the payload limit is parked by its server and fetched in chunks (see `transfer/`). */
export interface TransferLimits {
  /** All replies a server process holds for fetching at once; a reply that does not fit is refused. */
  maxParkedBytes: number;
  /** How long a parked reply waits for its chunks to be read before it is freed. */
  ttlMs: number;
  /** Bytes per chunk (raw, not base64), capped below the payload limit. */
  chunkBytes: number;
}

export const DEFAULT_TRANSFER_LIMITS: Readonly<TransferLimits> = Object.freeze({
  maxParkedBytes: 64 * 1024 * 1024,
  ttlMs: 30_000,
  chunkBytes: 512 * 1024,
});

/** Room a chunk leaves under the payload limit for its headers. */
export const CHUNK_HEADROOM_BYTES = 8 * 1024;
