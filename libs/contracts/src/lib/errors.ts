import { z } from 'zod';

/** The closed set of error codes that may cross the bus or the HTTP edge. */
export const ERROR_CODES = [
  'INVALID_ARGUMENT',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'CONFLICT',
  'FAILED_PRECONDITION',
  'RESOURCE_EXHAUSTED',
  'PAYLOAD_TOO_LARGE',
  'UNAVAILABLE',
  'OUTCOME_UNKNOWN',
  'DEADLINE_EXCEEDED',
  'INTERNAL',
  'DATA_LOSS',
] as const;

export const errorCodeSchema = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof errorCodeSchema>;

/**
 * `retryable` means "safe to retry blindly": the operation certainly did not run (or ran idempotently).
 * OUTCOME_UNKNOWN is deliberately not retryable: it may have run, so only a retry carrying the same
 * operation instance / idempotency key is safe.
 */
export const DEFAULT_RETRYABLE: Readonly<Record<ErrorCode, boolean>> = {
  INVALID_ARGUMENT: false,
  UNAUTHENTICATED: false,
  PERMISSION_DENIED: false,
  NOT_FOUND: false,
  CONFLICT: false,
  FAILED_PRECONDITION: false,
  RESOURCE_EXHAUSTED: true,
  PAYLOAD_TOO_LARGE: false,
  UNAVAILABLE: true,
  OUTCOME_UNKNOWN: false,
  DEADLINE_EXCEEDED: false,
  INTERNAL: false,
  DATA_LOSS: false,
};

/** HTTP status for each code, used by the gateway's single error envelope. */
export const HTTP_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  INVALID_ARGUMENT: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  FAILED_PRECONDITION: 400,
  RESOURCE_EXHAUSTED: 429,
  PAYLOAD_TOO_LARGE: 413,
  UNAVAILABLE: 503,
  OUTCOME_UNKNOWN: 504,
  DEADLINE_EXCEEDED: 504,
  INTERNAL: 500,
  DATA_LOSS: 500,
};

export const errorEnvelopeSchema = z.object({
  code: errorCodeSchema,
  message: z.string(),
  retryable: z.boolean(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

/** A domain error: thrown by handlers, carried unchanged across the bus, rethrown by the typed client. */
export class AppHostError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: { retryable?: boolean; details?: Record<string, unknown> } = {}) {
    super(message);
    this.name = 'AppHostError';
    this.code = code;
    this.retryable = options.retryable ?? DEFAULT_RETRYABLE[code];
    this.details = options.details;
  }

  toEnvelope(): ErrorEnvelope {
    return { code: this.code, message: this.message, retryable: this.retryable, ...(this.details ? { details: this.details } : {}) };
  }

  static fromEnvelope(envelope: ErrorEnvelope): AppHostError {
    return new AppHostError(envelope.code, envelope.message, { retryable: envelope.retryable, details: envelope.details });
  }
}

export function isAppHostError(value: unknown): value is AppHostError {
  return value instanceof AppHostError;
}

/** Zod issues as `{ path, message }` pairs: the offending paths an INVALID_ARGUMENT carries. */
export function describeIssues(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.map(String).join('.') : '(root)',
    message: issue.message,
  }));
}

export function invalidArgument(what: string, error: z.ZodError): AppHostError {
  return new AppHostError('INVALID_ARGUMENT', `${what} is invalid`, { details: { issues: describeIssues(error) } });
}

/**
 * A service's closed set of `details.reason` values (declared in `services/<service>/reasons.ts`). `schema` parses a
 * reason and rejects any other string; `details(reason, extra)` is the one way a throw site builds `details`, so only
 * a declared reason compiles; `of(error)` reads the reason back from a caught error. The wire form stays
 * `details: { reason, ...extra }`.
 */
export function defineReasons<const R extends readonly [string, ...string[]]>(values: R) {
  type Reason = R[number];
  const schema = z.enum(values);
  return {
    values,
    schema,
    details<D extends Record<string, unknown>>(reason: Reason, extra?: D): { reason: Reason } & Omit<D, 'reason'> {
      const details: Record<string, unknown> = { reason, ...extra };
      details['reason'] = reason;
      return details as { reason: Reason } & Omit<D, 'reason'>;
    },
    of(error: unknown): Reason | undefined {
      if (!(error instanceof AppHostError)) return undefined;
      const parsed = schema.safeParse(error.details?.['reason']);
      return parsed.success ? (parsed.data as Reason) : undefined;
    },
  };
}

/** The reason type of a `defineReasons` set. */
export type ReasonOf<S extends { values: readonly string[] }> = S['values'][number];
