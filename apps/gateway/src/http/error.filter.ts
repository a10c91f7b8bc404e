import { HttpStatusError } from './http-status-error';
import { Catch, HttpException, Inject, Logger, Optional, type ArgumentsHost, type ExceptionFilter, type LoggerService } from '@nestjs/common';
import { AppHostError, HTTP_STATUS_BY_CODE, type ErrorCode, type ErrorEnvelope } from '@apphost/contracts';
import { CORRELATION_ID_HEADER, resolveCorrelationId } from './correlation-id';

/** Optional injection token for the logger the filter reports internal errors to. */
export const ERROR_FILTER_LOGGER = Symbol('ERROR_FILTER_LOGGER');

export interface ErrorBody {
  error: ErrorEnvelope & { correlationId?: string };
}

// Structural slices of express' req/res: the filter needs nothing more, and express types are not a dependency.
interface HttpRequest {
  method: string;
  originalUrl?: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}
interface HttpResponse {
  headersSent: boolean;
  status(code: number): HttpResponse;
  setHeader(name: string, value: string): unknown;
  json(body: unknown): unknown;
  end(): unknown;
}

/** 4xx statuses Nest or body-parser raise, by the code the envelope reports. Unlisted 4xx are INVALID_ARGUMENT. */
const CODE_BY_CLIENT_STATUS: Record<number, ErrorCode> = {
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'NOT_FOUND',
  408: 'DEADLINE_EXCEEDED',
  409: 'CONFLICT',
  412: 'FAILED_PRECONDITION',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'RESOURCE_EXHAUSTED',
};

const MAX_CLIENT_MESSAGE = 256;

/**
 * The gateway's single error envelope. Domain errors keep their code and message; Nest/body-parser client errors are
 * mapped to codes; everything else is a 500 whose details stay in the server log, found again by correlation id.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger: LoggerService;

  constructor(@Optional() @Inject(ERROR_FILTER_LOGGER) logger?: LoggerService) {
    this.logger = logger ?? new Logger('HttpErrorFilter');
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const request = host.switchToHttp().getRequest<HttpRequest>();
    const response = host.switchToHttp().getResponse<HttpResponse>();
    const correlationId = resolveCorrelationId(request.headers);
    const { status, body } = this.toResponse(exception, request, correlationId);

    if (response.headersSent) {
      // Too late for an envelope: the client sees a truncated response, the log keeps the cause.
      response.end();
      return;
    }
    response.setHeader(CORRELATION_ID_HEADER, correlationId);
    const retryAfter = retryAfterSeconds(body.error);
    if (retryAfter !== undefined) response.setHeader('Retry-After', String(retryAfter));
    response.status(status).json(body);
  }

  private toResponse(exception: unknown, request: HttpRequest, correlationId: string): { status: number; body: ErrorBody } {
    if (exception instanceof AppHostError) {
      const status = exception instanceof HttpStatusError ? exception.status : HTTP_STATUS_BY_CODE[exception.code];
      if (status >= 500) this.logger.warn(`${describe(request)} -> ${exception.code}: ${exception.message} [${correlationId}]`);
      return { status, body: { error: exception.toEnvelope() } };
    }
    const clientError = asClientError(exception);
    if (clientError) {
      const error = new AppHostError(clientError.code, clientError.message, clientError.details ? { details: clientError.details } : {});
      return { status: HTTP_STATUS_BY_CODE[error.code], body: { error: error.toEnvelope() } };
    }
    const stack = exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
    this.logger.error(`${describe(request)} -> INTERNAL [${correlationId}]`, stack);
    return { status: 500, body: { error: { code: 'INTERNAL', message: 'internal error', retryable: false, correlationId } } };
  }
}

/** A 4xx from Nest (HttpException) or from body-parser (http-errors with `expose: true`); undefined otherwise. */
function asClientError(exception: unknown): { code: ErrorCode; message: string; details?: Record<string, unknown> } | undefined {
  let status: number;
  let message: unknown;
  if (exception instanceof HttpException) {
    status = exception.getStatus();
    const response = exception.getResponse();
    message = typeof response === 'string' ? response : ((response as { message?: unknown }).message ?? exception.message);
  } else if (isExposedHttpError(exception)) {
    status = exception.status;
    message = exception.message;
  } else {
    return undefined;
  }
  if (status < 400 || status >= 500) return undefined;
  const code = CODE_BY_CLIENT_STATUS[status] ?? 'INVALID_ARGUMENT';
  // class-validator style pipes put a list of messages in `message`.
  if (Array.isArray(message)) return { code, message: 'invalid request', details: { issues: message.map(String) } };
  return { code, message: typeof message === 'string' && message ? message.slice(0, MAX_CLIENT_MESSAGE) : code.toLowerCase().replace(/_/g, ' ') };
}

/** `Retry-After` (whole seconds, at least 1) for a retryable error whose details carry a hint (`retryAfterMs`). */
function retryAfterSeconds(error: ErrorEnvelope): number | undefined {
  const hint = error.details?.['retryAfterMs'];
  if (!error.retryable || typeof hint !== 'number' || !Number.isFinite(hint) || hint < 0) return undefined;
  return Math.max(1, Math.ceil(hint / 1000));
}

function isExposedHttpError(value: unknown): value is Error & { status: number } {
  const v = value as { status?: unknown; expose?: unknown } | null;
  return value instanceof Error && typeof v?.status === 'number' && v.expose === true;
}

function describe(request: HttpRequest): string {
  // Path only: query strings may carry things that do not belong in logs.
  return `${request.method} ${(request.originalUrl ?? request.url).split('?')[0]}`;
}
