import type { BusClient } from '@apphost/bus';
import { ConnReadResource } from '@apphost/contracts';
import { admitReadRequest, checkReadResponse, type ReadLimits, type ResourcePolicy } from '@apphost/policy';
import { requestOnGeneration, type GenerationAddress } from './generation-client';

export interface PolicedRead {
  uri: string;
  policy: ResourcePolicy;
  limits: ReadLimits;
  /** Passed to the owner: a text of this many UTF-8 bytes or more comes back as a `textLiteralReference` and `textBytes`. */
  textReferenceFromBytes?: number;
}

export interface PolicedReadResult {
  /** Each item as the server returned it (a large text by reference, when asked), its `uri` in canonical form. */
  contents: Record<string, unknown>[];
  totalBytes: number;
  /** The server's cache hints, only when well-formed. */
  ttlMs?: number;
  cacheScope?: string;
}

/**
 * One `resources/read` on a connection generation, asked of its owner directly, under a resource policy on both
 * sides: the requested URI must match (nothing is sent otherwise), and so must every returned item after
 * canonicalization; one that does not rejects the whole answer (PERMISSION_DENIED, RESOURCE_POLICY_DENIED), as
 * does an item or the total over `limits` (PAYLOAD_TOO_LARGE). A referenced text counts at its byte length.
 * `onRefused` hears of an answer refused that way (the server's doing, unlike a denied request), before it is thrown.
 */
export async function readUnderPolicy(
  bus: BusClient,
  generation: GenerationAddress,
  read: PolicedRead,
  options: { timeoutMs?: number; onRefused?: (error: Error) => void } = {},
): Promise<PolicedReadResult> {
  const uri = admitReadRequest(read.policy, read.uri);
  const answer = await requestOnGeneration(
    bus,
    ConnReadResource,
    generation,
    { uri, ...(read.textReferenceFromBytes === undefined ? {} : { textReferenceFromBytes: read.textReferenceFromBytes }) },
    { timeoutMs: options.timeoutMs },
  );
  try {
    return { ...checkReadResponse(read.policy, answer.contents, read.limits), ...cacheHintsOf(answer) };
  } catch (error) {
    options.onRefused?.(error as Error);
    throw error;
  }
}

/** The result's cache hints, passed on only when well-formed (a View's idempotent read is never retained longer). */
function cacheHintsOf(answer: Record<string, unknown>): { ttlMs?: number; cacheScope?: string } {
  const { ttlMs, cacheScope } = answer;
  return {
    ...(typeof ttlMs === 'number' && Number.isSafeInteger(ttlMs) && ttlMs >= 0 ? { ttlMs } : {}),
    ...(typeof cacheScope === 'string' && cacheScope.length <= 64 ? { cacheScope } : {}),
  };
}
