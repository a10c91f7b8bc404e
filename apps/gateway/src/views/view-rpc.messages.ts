import {
  AppHostError,
  GovernedReasons,
  JSON_RPC_PROTOCOL_CODES,
  jsonRpcCodeOf,
  jsonRpcIdSchema,
  type JsonRpcId,
  type JsonRpcResponse,
} from '@apphost/contracts';
import type { ViewRpcBody } from './view-rpc.body';

/** A View message the gateway forwards: the JSON value of the body, and the body's size in bytes. */
export interface ViewRpcMessage {
  message: unknown;
  bytes: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The one JSON value of a View RPC body (parsed once, here), or the JSON-RPC error the gateway answers itself: a
 * body that is not one UTF-8 JSON value is the parse error (-32700), one over the route's limit -32006. Structure
 * (batches, `jsonrpc`, methods) is governed-operations' to judge.
 */
export function viewRpcMessageOf(body: ViewRpcBody): ViewRpcMessage | JsonRpcResponse {
  if (body.kind === 'too-large') return tooLarge(null, body.limitBytes);
  if (body.kind === 'unreadable') return parseError(body.why);
  let text: string;
  try {
    text = utf8.decode(body.raw);
  } catch {
    return parseError('the body is not UTF-8');
  }
  try {
    return { message: JSON.parse(text) as unknown, bytes: body.raw.length };
  } catch {
    return parseError('the body is not one JSON value');
  }
}

/** The JSON-RPC error answering `id` for an AppHost error: its code by `jsonRpcCodeOf`, `data: { code, reason, retryable }`. */
export function jsonRpcErrorOf(
  id: JsonRpcId | null,
  error: AppHostError,
  code = jsonRpcCodeOf(error.code, GovernedReasons.of(error) ?? null),
): JsonRpcResponse {
  return {
    jsonrpc: '2.0',
    id,
    error: { code, message: error.message, data: { code: error.code, reason: GovernedReasons.of(error) ?? null, retryable: error.retryable } },
  };
}

/** A message too large for the route or the bus, answered with the message's id when it has a valid one. */
export function tooLarge(message: unknown, limitBytes: number): JsonRpcResponse {
  const error = new AppHostError('PAYLOAD_TOO_LARGE', `the message exceeds the ${limitBytes}-byte limit`, {
    details: GovernedReasons.details('RPC_REQUEST_TOO_LARGE'),
  });
  return jsonRpcErrorOf(idOf(message), error);
}

function parseError(why: string): JsonRpcResponse {
  const error = new AppHostError('INVALID_ARGUMENT', `parse error: ${why}`, { details: GovernedReasons.details('RPC_INVALID_REQUEST') });
  return jsonRpcErrorOf(null, error, JSON_RPC_PROTOCOL_CODES.PARSE_ERROR);
}

function idOf(message: unknown): JsonRpcId | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
  const id = jsonRpcIdSchema.safeParse((message as { id?: unknown }).id);
  return id.success ? id.data : null;
}
