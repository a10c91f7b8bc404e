import { AppHostError, jsonRpcCodeOf, jsonRpcIdSchema, type ErrorEnvelope, type JsonRpcId, type JsonRpcResponse } from '@apphost/contracts';

/** What a View is told of a failure that is not an AppHostError: nothing of its cause (that is logged). */
const INTERNAL_MESSAGE = 'the operation failed inside AppHost';

/** A JSON-RPC success response. */
export function jsonRpcResult(id: JsonRpcId, result: Record<string, unknown>): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result };
}

/**
 * A JSON-RPC error response for a failure: `error.code` from the one table (`jsonRpcCodeOf`), `error.data` AppHost's
 * `{ code, reason, retryable }` and the rest of the error's details (what a client may act on: `revocation`,
 * `issues`, …). Anything that is not an AppHostError is INTERNAL.
 */
export function jsonRpcError(id: JsonRpcId | null, failure: unknown): JsonRpcResponse {
  return jsonRpcErrorOf(id, envelopeOf(failure));
}

export function jsonRpcErrorOf(id: JsonRpcId | null, envelope: ErrorEnvelope): JsonRpcResponse {
  // `details.id` (the id an admission error read) is the response's own id already.
  const { reason, id: _id, ...rest } = envelope.details ?? {};
  const named = typeof reason === 'string' ? reason : null;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: jsonRpcCodeOf(envelope.code, named),
      message: envelope.message,
      data: { ...rest, code: envelope.code, reason: named, retryable: envelope.retryable },
    },
  };
}

/** The envelope of a failure; an unexpected one becomes INTERNAL with a message that says nothing of it. */
export function envelopeOf(failure: unknown): ErrorEnvelope {
  return failure instanceof AppHostError ? failure.toEnvelope() : new AppHostError('INTERNAL', INTERNAL_MESSAGE).toEnvelope();
}

/** The request id an admission error could still read (`details.id`), so its error answers that id; else null. */
export function idOfRejected(failure: unknown): JsonRpcId | null {
  if (!(failure instanceof AppHostError)) return null;
  const parsed = jsonRpcIdSchema.safeParse(failure.details?.['id']);
  return parsed.success ? parsed.data : null;
}
