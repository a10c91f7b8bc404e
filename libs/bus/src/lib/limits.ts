/** Just under NATS' 1 MiB default `max_payload`, leaving room for headers. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024 - 8 * 1024;
