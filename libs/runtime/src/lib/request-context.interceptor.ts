import { Inject, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Observable } from 'rxjs';
import { endSpan, parseTraceparent, RequestContexts, startSpan } from '@apphost/bus';
import { AppHostError } from '@apphost/contracts';
import { resolveCorrelationId } from './correlation';
import { SERVICE_CONTEXT } from './runtime.tokens';
import type { ServiceContext } from './service-definition';

/** A caller may shorten (never lengthen) its request's deadline, in milliseconds. */
export const TIMEOUT_HEADER = 'x-apphost-timeout-ms';

/**
 * Opens the request context of every HTTP request: its correlation id, its deadline (HTTP_REQUEST_TIMEOUT_MS, or
 * the caller's shorter `x-apphost-timeout-ms`) and its server span (child of a W3C `traceparent`). Every bus
 * request the handler causes carries all three without the handler passing anything.
 */
@Injectable()
export class RequestContextInterceptor implements NestInterceptor {
  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}

  intercept(execution: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (execution.getType() !== 'http') return next.handle();
    const req = execution.switchToHttp().getRequest<Request>();
    const res = execution.switchToHttp().getResponse<Response>();
    const deadline = Date.now() + requestTimeoutMs(req.headers[TIMEOUT_HEADER], this.context.config.HTTP_REQUEST_TIMEOUT_MS);
    const route = (req.route as { path?: string } | undefined)?.path ?? req.path;
    const span = startSpan({
      name: `HTTP ${req.method} ${route}`,
      kind: 'server',
      service: this.context.service,
      parent: parseTraceparent(req.headers.traceparent),
      attributes: { 'http.request.method': req.method, 'http.route': route },
    });
    const context = { correlationId: resolveCorrelationId(req.headers), deadline, span };
    const started = performance.now();
    res.once('finish', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      endSpan(span, `HTTP ${res.statusCode}`);
      RequestContexts.run(context, () =>
        this.context.logger.debug({ method: req.method, route, status: res.statusCode, ms: Math.round(performance.now() - started) }, 'http request handled'),
      );
    });
    return new Observable((subscriber) => RequestContexts.run(context, () => next.handle().subscribe(subscriber)));
  }
}

function requestTimeoutMs(header: string | string[] | undefined, configured: number): number {
  if (header === undefined) return configured;
  const value = typeof header === 'string' && /^[0-9]{1,9}$/.test(header) ? Number(header) : NaN;
  if (!(value >= 1))
    throw new AppHostError('INVALID_ARGUMENT', `${TIMEOUT_HEADER} must be a positive integer of milliseconds`, { details: { header: TIMEOUT_HEADER } });
  return Math.min(value, configured);
}
