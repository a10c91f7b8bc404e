import { canonicalize, CanonicalJsonError } from '@apphost/canonical-json';
import { AppHostError, GovernedReasons, type ViewPolicy } from '@apphost/contracts';

/** A content block of an update, as the published schema admitted it (its `type` names the modality). */
export type ContentBlock = { type: string } & Record<string, unknown>;

/** One `ui/update-model-context` as it is committed: the replacement state and its canonical size. */
export interface ContextUpdate {
  content: ContentBlock[];
  structuredContent: Record<string, unknown> | null;
  /** Canonical JSON bytes of `{ content, structuredContent }`. */
  bytes: number;
  /** No content and no structured content: the update clears the View's register. */
  empty: boolean;
}

/**
 * The update the admitted params describe (`McpUiUpdateModelContextRequestSchema` checked their shape). Absent
 * content is no content; the size is counted on the canonical JSON, so equal state has one size whatever the
 * View's encoding. A value outside canonical I-JSON (an unsafe number, a lone surrogate) is INVALID_ARGUMENT.
 */
export function contextUpdateOf(params: Record<string, unknown>): ContextUpdate {
  const content = Array.isArray(params['content']) ? (params['content'] as ContentBlock[]) : [];
  const raw = params['structuredContent'];
  const structuredContent = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  let canonical: string;
  try {
    canonical = canonicalize({ content, structuredContent });
  } catch (error) {
    if (!(error instanceof CanonicalJsonError)) throw error;
    throw new AppHostError('INVALID_ARGUMENT', 'the model context is not canonical JSON', {
      details: GovernedReasons.details('RPC_INVALID_PARAMS', { method: 'ui/update-model-context', canonical: error.details?.['reason'] ?? null }),
    });
  }
  return { content, structuredContent, bytes: Buffer.byteLength(canonical, 'utf8'), empty: content.length === 0 && structuredContent === null };
}

/** The profile's per-register cap: an update over it is refused whole (a register is never truncated). */
export function assertRegisterFits(policy: ViewPolicy, update: ContextUpdate): void {
  const limit = policy.registers.maxRegisterBytes;
  if (update.bytes <= limit) return;
  throw new AppHostError('PAYLOAD_TOO_LARGE', `the model context is ${update.bytes} bytes, more than the ${limit} a register holds`, {
    details: GovernedReasons.details('REGISTER_TOO_LARGE', { bytes: update.bytes, limit }),
  });
}
