import { canonicalDigest } from '@apphost/canonical-json';
import { canonicalizeUri } from './uri';
import { normalizeVisibility, type Visibility } from './visibility';

/** The purpose tag of tool-definition fingerprints (one of canonical-json's digest purposes). */
export const TOOL_DEFINITION_PURPOSE = 'tool-definition';

/** What a pinned tool definition covers: name, description, input/output schema and `_meta.ui`. */
export function toolDefinitionSubset(tool: Record<string, unknown>): Record<string, unknown> {
  const meta = isRecord(tool['_meta']) ? tool['_meta'] : undefined;
  const subset: Record<string, unknown> = { name: tool['name'] };
  for (const key of ['description', 'inputSchema', 'outputSchema'] as const) if (tool[key] !== undefined) subset[key] = tool[key];
  if (meta && meta['ui'] !== undefined) subset['ui'] = meta['ui'];
  if (meta && meta['ui/resourceUri'] !== undefined) subset['legacyResourceUri'] = meta['ui/resourceUri'];
  return subset;
}

/** Lowercase hex SHA-256 fingerprint of a tool's definition subset (canonical JSON, purpose-tagged). */
export function toolFingerprint(tool: Record<string, unknown>): string {
  return canonicalDigest(TOOL_DEFINITION_PURPOSE, toolDefinitionSubset(tool));
}

export type ToolUiClass =
  | { kind: 'ui'; resourceUri: string; visibility: Visibility[] }
  | { kind: 'non-ui'; visibility: Visibility[] }
  | { kind: 'malformed'; why: 'UI_META' | 'VISIBILITY' };

/**
 * How a raw declaration is classified: UI-associated when `_meta.ui.resourceUri` (or the legacy
 * `_meta["ui/resourceUri"]`) is a canonicalizable `ui://` URI. A `_meta.ui` that is not an object, a resource URI
 * that is not a valid `ui://` URI, or a malformed visibility denies the tool everywhere (`malformed`).
 */
export function classifyToolDeclaration(tool: Record<string, unknown>): ToolUiClass {
  const meta = tool['_meta'];
  if (meta !== undefined && !isRecord(meta)) return { kind: 'malformed', why: 'UI_META' };
  const ui = meta?.['ui'];
  if (ui !== undefined && !isRecord(ui)) return { kind: 'malformed', why: 'UI_META' };
  const rawVisibility = ui?.['visibility'];
  const visibility = normalizeVisibility(rawVisibility);
  if (rawVisibility !== undefined && visibility.length === 0 && !(Array.isArray(rawVisibility) && rawVisibility.length === 0))
    return { kind: 'malformed', why: 'VISIBILITY' };
  const rawUri = ui?.['resourceUri'] ?? meta?.['ui/resourceUri'];
  if (rawUri === undefined) return { kind: 'non-ui', visibility };
  if (typeof rawUri !== 'string') return { kind: 'malformed', why: 'UI_META' };
  try {
    const resourceUri = canonicalizeUri(rawUri);
    if (!resourceUri.startsWith('ui://')) return { kind: 'malformed', why: 'UI_META' };
    return { kind: 'ui', resourceUri, visibility };
  } catch {
    return { kind: 'malformed', why: 'UI_META' };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
