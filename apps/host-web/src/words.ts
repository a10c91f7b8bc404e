/** The gateway's error envelope, as far as the page reads it. */
export interface ErrorBody {
  error?: { code?: string; message?: string; retryable?: boolean; details?: { reason?: string } };
}

const BY_REASON: Record<string, string> = {
  VIEW_REVOKED: 'This View is no longer live (its session, toolset or sign-in changed, or it was closed).',
  VIEW_GRANT_INVALID: 'The View’s grant was not accepted; open the widget again.',
  PRINCIPAL_REVOKED: 'Your access was revoked.',
  STDIO_NOT_ALLOWED: 'This deployment does not allow that server to run.',
  SANDBOX_HOST_NOT_ALLOWED: 'This page’s origin may not embed Views (AUTH_ORIGIN_ALLOWLIST).',
  SANDBOX_CSP_INVALID: 'The View’s content security policy was refused by the sandbox.',
};

const BY_CODE: Record<string, string> = {
  UNAUTHENTICATED: 'You are not signed in, or your token expired: open the link npm start printed again.',
  PERMISSION_DENIED: 'That is not allowed for your sign-in.',
  NOT_FOUND: 'Not found (or not yours).',
  INVALID_ARGUMENT: 'The request was not valid.',
  FAILED_PRECONDITION: 'That cannot be done in the current state.',
  RESOURCE_EXHAUSTED: 'Too many requests right now; try again shortly.',
  UNAVAILABLE: 'A service is unavailable right now; try again shortly.',
  DEADLINE_EXCEEDED: 'That took too long and was stopped.',
  PAYLOAD_TOO_LARGE: 'That is too large.',
  CONFLICT: 'That conflicts with an earlier request.',
  INTERNAL: 'Something went wrong inside AppHost.',
};

/** An error answer in words a person can act on, with the server's own message and code kept for the record. */
export function errorInWords(status: number, body: ErrorBody | undefined): string {
  const error = body?.error;
  if (!error) return status === 0 ? 'AppHost could not be reached.' : `The request failed (HTTP ${status}).`;
  const reason = error.details?.reason;
  const lead = (reason && BY_REASON[reason]) ?? (error.code && BY_CODE[error.code]) ?? 'The request failed.';
  const detail = [error.message, reason ?? error.code].filter(Boolean).join(' — ');
  return detail ? `${lead} (${detail})` : lead;
}
