import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { AppHostError, ConnectionReasons } from '@apphost/contracts';
import type { ProcessExit } from './stdio-diagnostics';
import type { McpTarget } from './target';

/** The closed set of `details.cause` of an `MCP_CONNECT_FAILED` error. */
export type ConnectCause = 'SPAWN_FAILED' | 'PROCESS_EXITED' | 'NETWORK_ERROR' | 'HTTP_STATUS' | 'TIMEOUT' | 'HANDSHAKE_FAILED';

export interface ConnectFailureContext {
  target: McpTarget;
  toolsetId?: string;
  connectTimeoutMs: number;
  /** stdio only: how the process ended and what it last said on stderr. */
  exit?: ProcessExit;
  lastStderrLine?: string;
}

const MESSAGE_MAX_CHARS = 160;

/**
 * One typed error for a connection that never initialized, saying why in words an operator can act on: the errno
 * and command of a failed spawn, the exit status and last stderr line of a server that died, the errno and
 * host:port or HTTP status of a Streamable HTTP server, or the timeout. Never header values, arguments or bodies.
 */
export function connectFailure(error: unknown, context: ConnectFailureContext): AppHostError {
  const { cause, why, extra } = explain(error, context);
  const subject = context.toolsetId ? `toolset ${context.toolsetId}: connect failed` : 'connect failed';
  return new AppHostError(cause === 'TIMEOUT' ? 'DEADLINE_EXCEEDED' : 'UNAVAILABLE', `${subject}: ${why}`, {
    details: ConnectionReasons.details('MCP_CONNECT_FAILED', {
      cause,
      ...(context.toolsetId ? { toolsetId: context.toolsetId } : {}),
      ...extra,
    }),
  });
}

function explain(error: unknown, context: ConnectFailureContext): { cause: ConnectCause; why: string; extra: Record<string, unknown> } {
  const { target } = context;
  const errno = errnoOf(error);
  if (target.kind === 'stdio' && errno && isSpawnError(error)) {
    const why = errno === 'ENOENT' ? `command not found: ${target.command} (ENOENT)` : `could not start ${target.command} (${errno})`;
    return { cause: 'SPAWN_FAILED', why, extra: { errno } };
  }
  if (target.kind === 'stdio' && context.exit) {
    const { code, signal } = context.exit;
    const status = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const said = context.lastStderrLine ? `; last stderr line: ${context.lastStderrLine}` : '; it wrote nothing to stderr';
    return { cause: 'PROCESS_EXITED', why: `the server ${status} before initialize${said}`, extra: { exitCode: code, signal } };
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return { cause: 'TIMEOUT', why: `no initialize answer within ${context.connectTimeoutMs}ms`, extra: {} };
  }
  if (target.kind === 'http') {
    const where = hostPort(target.url);
    const status = httpStatusOf(error);
    if (status !== undefined) return { cause: 'HTTP_STATUS', why: `HTTP ${status} from ${where}`, extra: { status } };
    if (errno) {
      const why = errno === 'ECONNREFUSED' ? `connection refused by ${where} (ECONNREFUSED)` : `${errno} reaching ${where}`;
      return { cause: 'NETWORK_ERROR', why, extra: { errno } };
    }
  }
  return { cause: 'HANDSHAKE_FAILED', why: describeError(error), extra: {} };
}

/** The errno code of a Node system error, also when fetch wraps it as `cause` (possibly inside an AggregateError). */
function errnoOf(error: unknown, depth = 0): string | undefined {
  if (!error || typeof error !== 'object' || depth > 4) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)) return code;
  const nested = (error as { errors?: unknown[] }).errors;
  return errnoOf((error as { cause?: unknown }).cause, depth + 1) ?? (Array.isArray(nested) ? errnoOf(nested[0], depth + 1) : undefined);
}

function isSpawnError(error: unknown): boolean {
  return typeof (error as { syscall?: unknown }).syscall === 'string' && String((error as { syscall: string }).syscall).startsWith('spawn');
}

function httpStatusOf(error: unknown): number | undefined {
  const holder = error as { status?: unknown; data?: { status?: unknown } } | undefined;
  const status = holder?.status ?? holder?.data?.status;
  return typeof status === 'number' ? status : undefined;
}

function hostPort(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.port ? `${parsed.hostname}:${parsed.port}` : parsed.hostname;
  } catch {
    return 'the server';
  }
}

function describeError(error: unknown): string {
  if (error instanceof SdkError) return `${error.code}: ${error.message.slice(0, MESSAGE_MAX_CHARS)}`;
  if (error instanceof Error) return `${error.name}: ${error.message.slice(0, MESSAGE_MAX_CHARS)}`;
  return 'unknown error';
}
