import { randomUUID } from 'node:crypto';

export const CORRELATION_ID_HEADER = 'x-correlation-id';

const VALID = /^[A-Za-z0-9._-]{1,128}$/;

/** A caller-supplied id when it is safe to log and echo (bounded, no header/log injection), else a fresh UUID. */
export function resolveCorrelationId(headers: Record<string, string | string[] | undefined>): string {
  const supplied = headers[CORRELATION_ID_HEADER];
  return typeof supplied === 'string' && VALID.test(supplied) ? supplied : randomUUID();
}
