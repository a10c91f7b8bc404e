import { AppHostError, type ErrorCode } from '@apphost/contracts';

/** A domain error answered with an HTTP status other than its code's default (406 for a refused Accept). */
export class HttpStatusError extends AppHostError {
  constructor(
    readonly status: number,
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown> } = {},
  ) {
    super(code, message, options);
  }
}
