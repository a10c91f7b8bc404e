import { createHash } from 'node:crypto';
import { canonicalize } from '@apphost/canonical-json';
import { AppHostError, GovernedReasons, type EventWidget, type LedgerEventInput, type ToolBatchFunctionResponse } from '@apphost/contracts';

/** A call of the batch after admission-time normalization: its id is always set, order is the model's emission order. */
export interface PlannedCall {
  index: number;
  functionCallId: string;
  tool: string;
  arguments: Record<string, unknown>;
}

export const MIXED_BATCH_MESSAGE =
  'This batch mixed tools that show a UI with tools that do not, so none of these calls ran. Call these tools one at a time, each in its own turn.';

/**
 * Missing function-call ids, populated deterministically: the same invocation, position, tool and arguments always
 * give the same id (a retried turn converges), and the id never collides with one the model chose in the batch.
 */
export function planCalls(
  invocationId: string,
  calls: readonly { functionCallId?: string; tool: string; arguments?: Record<string, unknown> }[],
): PlannedCall[] {
  const given = new Set<string>();
  for (const call of calls) {
    if (call.functionCallId === undefined) continue;
    if (given.has(call.functionCallId)) {
      throw new AppHostError('INVALID_ARGUMENT', `function call id ${JSON.stringify(call.functionCallId)} appears twice in the batch`, {
        details: GovernedReasons.details('DUPLICATE_FUNCTION_CALL_ID', { functionCallId: call.functionCallId }),
      });
    }
    given.add(call.functionCallId);
  }
  const used = new Set(given);
  return calls.map((call, index) => {
    const args = call.arguments ?? {};
    let functionCallId = call.functionCallId;
    for (let attempt = 0; functionCallId === undefined; attempt++) {
      const digest = createHash('sha256')
        .update(canonicalize({ kind: 'apphost.function-call-id.v1', invocationId, index, tool: call.tool, arguments: args, attempt }))
        .digest('hex');
      const candidate = `fc-${digest.slice(0, 32)}`;
      if (!used.has(candidate)) functionCallId = candidate;
    }
    used.add(functionCallId);
    return { index, functionCallId, tool: call.tool, arguments: args };
  });
}

export const errorResponse = (code: string, message: string): Record<string, unknown> => ({ error: { code, message: message.slice(0, 1024) } });

/** The rejection of a mixed batch: one event, exactly one terminal error response per call, original ids, emission order. */
export function mixedBatchEvent(author: string, invocationId: string, calls: readonly PlannedCall[]): LedgerEventInput {
  return {
    author,
    invocationId,
    functionResponses: calls.map((c) => ({ id: c.functionCallId, name: c.tool, response: errorResponse('MIXED_BATCH', MIXED_BATCH_MESSAGE) })),
  };
}

/**
 * The one event of an admitted batch: function responses in emission order, each rendered call's widget, and an
 * `adk_request_confirmation` function call per call held for the user's decision.
 */
export function batchEvent(
  author: string,
  invocationId: string,
  responses: readonly ToolBatchFunctionResponse[],
  widgets: readonly EventWidget[],
  confirmationCalls: readonly { id: string; name: string; args: Record<string, unknown> }[],
): LedgerEventInput {
  return {
    author,
    invocationId,
    ...(confirmationCalls.length > 0 ? { functionCalls: [...confirmationCalls] } : {}),
    functionResponses: responses.map((r) => ({ id: r.functionCallId, name: r.name, response: r.response })),
    ...(widgets.length > 0 ? { widgets: [...widgets] } : {}),
  };
}

/** A typed error as the model may see it: the code and the message, nothing else (no details, no stack). */
export function describeFailure(error: unknown): { code: string; message: string } {
  if (error instanceof AppHostError) return { code: error.code, message: error.message };
  return { code: 'INTERNAL', message: 'the tool call failed' };
}

/**
 * What must not change between the declaration the batch was admitted against and the one the executing
 * generation lists now: name, input/output schemas, UI visibility and the UI resource URI.
 */
export function declarationIdentity(declaration: Record<string, unknown>): string {
  const meta = (declaration['_meta'] ?? {}) as Record<string, unknown>;
  const ui = (meta['ui'] ?? {}) as Record<string, unknown>;
  return canonicalize({
    name: declaration['name'] ?? null,
    inputSchema: declaration['inputSchema'] ?? null,
    outputSchema: declaration['outputSchema'] ?? null,
    visibility: ui['visibility'] ?? null,
    resourceUri: ui['resourceUri'] ?? meta['ui/resourceUri'] ?? null,
  });
}

/** Null when the generation still lists the admitted declaration unchanged, else why the call must not run. */
export function driftOf(admitted: Record<string, unknown>, listed: readonly Record<string, unknown>[]): string | null {
  const current = listed.find((t) => t['name'] === admitted['name']);
  if (!current) return 'the tool is no longer listed by its connection';
  return declarationIdentity(current) === declarationIdentity(admitted) ? null : 'the tool definition changed since the batch was admitted';
}
