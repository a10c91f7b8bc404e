import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { AppHostError, ConnectionReasons, type ConnectionReason } from '@apphost/contracts';

export type McpOperation = 'connect' | 'tools/list' | 'resources/list' | 'resources/templates/list' | 'tools/call' | 'resources/read' | 'ping';

/** Reasons carried in `details.reason` of the typed errors this library raises. */
export const MCP_REASONS = {
  connectionClosed: 'CONNECTION_CLOSED',
  inputRequiredDenied: 'INPUT_REQUIRED_DENIED',
  inputRequiredRounds: 'INPUT_REQUIRED_ROUNDS_EXCEEDED',
  inputRequiredTime: 'INPUT_REQUIRED_TIME_EXCEEDED',
  requestStateMismatch: 'REQUEST_STATE_MISMATCH',
  cancelled: 'CANCELLED',
  timeout: 'MCP_TIMEOUT',
  protocolError: 'MCP_PROTOCOL_ERROR',
  invalidResult: 'MCP_INVALID_RESULT',
  connectFailed: 'MCP_CONNECT_FAILED',
} as const satisfies Record<string, ConnectionReason>;

/**
 * Maps whatever the SDK threw to one typed error. A timed-out `tools/call` is OUTCOME_UNKNOWN (the server may
 * have acted); other timeouts are DEADLINE_EXCEEDED. Messages never carry arguments, headers or results.
 */
export function toAppHostError(error: unknown, operation: McpOperation): AppHostError {
  if (error instanceof AppHostError) return error;
  if (error instanceof SdkError) {
    switch (error.code) {
      case SdkErrorCode.RequestTimeout:
        return operation === 'tools/call'
          ? new AppHostError('OUTCOME_UNKNOWN', `${operation} timed out; the server may have acted`, {
              details: ConnectionReasons.details(MCP_REASONS.timeout, { operation }),
            })
          : new AppHostError('DEADLINE_EXCEEDED', `${operation} timed out`, { details: ConnectionReasons.details(MCP_REASONS.timeout, { operation }) });
      case SdkErrorCode.ConnectionClosed:
      case SdkErrorCode.NotConnected:
      case SdkErrorCode.SendFailed:
        return new AppHostError('FAILED_PRECONDITION', `the MCP connection is closed (${operation})`, {
          details: ConnectionReasons.details(MCP_REASONS.connectionClosed, { operation }),
        });
      case SdkErrorCode.UnsupportedResultType:
        return new AppHostError('FAILED_PRECONDITION', `${operation} answered with an input request this connection does not accept`, {
          details: ConnectionReasons.details(MCP_REASONS.inputRequiredDenied, { operation }),
        });
      case SdkErrorCode.InputRequiredRoundsExceeded:
        return new AppHostError('FAILED_PRECONDITION', `${operation} exceeded its input-request rounds`, {
          details: ConnectionReasons.details(MCP_REASONS.inputRequiredRounds, { operation }),
        });
      case SdkErrorCode.InvalidResult:
        return new AppHostError('FAILED_PRECONDITION', `${operation} returned an invalid result`, {
          details: ConnectionReasons.details(MCP_REASONS.invalidResult, { operation }),
        });
      default:
        return new AppHostError('FAILED_PRECONDITION', `${operation} failed in the MCP client (${error.code})`, {
          details: ConnectionReasons.details(MCP_REASONS.protocolError, { operation, sdkCode: error.code }),
        });
    }
  }
  if (error instanceof ProtocolError) {
    // -32021: the server refused to ask for input the client did not declare (app-safe never declares any).
    if (error.code === -32021) {
      return new AppHostError('FAILED_PRECONDITION', `${operation} requires client input this connection never provides`, {
        details: ConnectionReasons.details(MCP_REASONS.inputRequiredDenied, { operation, mcpCode: error.code }),
      });
    }
    const code = error.code === -32602 ? 'INVALID_ARGUMENT' : error.code === -32601 ? 'NOT_FOUND' : 'FAILED_PRECONDITION';
    return new AppHostError(code, `the MCP server rejected ${operation} (${error.code})`, {
      details: ConnectionReasons.details(MCP_REASONS.protocolError, { operation, mcpCode: error.code }),
    });
  }
  if (isAbort(error))
    return new AppHostError('FAILED_PRECONDITION', `${operation} was cancelled`, { details: ConnectionReasons.details(MCP_REASONS.cancelled, { operation }) });
  return new AppHostError('UNAVAILABLE', `${operation} failed: ${error instanceof Error ? error.name : 'unknown error'}`, {
    details: ConnectionReasons.details(MCP_REASONS.connectFailed, { operation }),
  });
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || /abort|cancel/i.test(error.message));
}
