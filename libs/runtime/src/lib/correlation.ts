import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { isValidCorrelationId } from '@apphost/bus';

export const CORRELATION_ID_HEADER = 'x-correlation-id';

/** A caller-supplied id when it is safe to log and echo (bounded, no header/log injection), else a fresh UUID. */
export function resolveCorrelationId(headers: Record<string, string | string[] | undefined>): string {
  const supplied = headers[CORRELATION_ID_HEADER];
  return isValidCorrelationId(supplied) ? supplied : randomUUID();
}

/**
 * Gives every HTTP request one correlation id, echoed in the response header and carried into the bus
 * requests it causes, so one id follows a call through every service's logs.
 */
export function correlationMiddleware() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const id = resolveCorrelationId(req.headers);
    req.headers[CORRELATION_ID_HEADER] = id;
    res.setHeader(CORRELATION_ID_HEADER, id);
    next();
  };
}
