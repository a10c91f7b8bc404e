/** Headers every bus request carries; both transports propagate them unchanged. */
export const HEADER_CORRELATION_ID = 'apphost-correlation-id';
/** Absolute deadline, epoch milliseconds: a server that receives a request past it does not execute it. */
export const HEADER_DEADLINE = 'apphost-deadline';

const CORRELATION_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

export function isValidCorrelationId(value: unknown): value is string {
  return typeof value === 'string' && CORRELATION_ID_PATTERN.test(value);
}
