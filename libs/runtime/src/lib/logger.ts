import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';
import { RequestContexts } from '@apphost/bus';

export type { Logger } from 'pino';

/**
 * JSON logs, one line per event, every line tagged with its service and instance, and, inside a request, with its
 * correlation id and trace id (from `RequestContexts`), so one id finds a call in every service's logs.
 */
export function createLogger(service: string, instanceId: string, level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = { level, base: { service, instanceId }, timestamp: pino.stdTimeFunctions.isoTime, mixin: requestFields };
  return destination ? pino(options, destination) : pino(options);
}

/** Routes NestJS's own log lines through pino. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}

function requestFields(): Record<string, string> {
  const current = RequestContexts.current();
  if (!current) return {};
  const traceId = current.span?.spanContext().traceId;
  return traceId && traceId !== '00000000000000000000000000000000'
    ? { correlationId: current.correlationId, traceId }
    : { correlationId: current.correlationId };
}
