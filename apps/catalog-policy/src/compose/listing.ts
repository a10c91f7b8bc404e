import { createHash } from 'node:crypto';
import type { BoundGeneration, BoundToolHandle, Exclusion } from '@apphost/contracts';
import { classifyToolDeclaration, toolFingerprint, type ToolUiClass } from '@apphost/policy';

/** One tool as one class listed it: the exact raw declaration, its fingerprint and its UI classification. */
export interface ListedTool {
  name: string;
  declaration: Record<string, unknown>;
  fingerprint: string;
  ui: ToolUiClass;
}

/** A whole listing of one generation. */
export interface Listing {
  generation: BoundGeneration;
  tools: ListedTool[];
}

/** A tool that survived two-class resolution: the declaration and the generation that will execute it. */
export interface Candidate {
  toolsetId: string;
  tool: ListedTool & { ui: Exclude<ToolUiClass, { kind: 'malformed' }> };
  generation: BoundGeneration;
}

export function toListing(generation: BoundGeneration, raw: Record<string, unknown>[]): Listing {
  return {
    generation,
    tools: raw.map((declaration) => ({
      name: String(declaration['name']),
      declaration,
      fingerprint: toolFingerprint(declaration),
      ui: classifyToolDeclaration(declaration),
    })),
  };
}

/** Names listed more than once on one generation: ambiguous, so excluded (fail closed). */
export function duplicateNames(tools: readonly ListedTool[]): Set<string> {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const t of tools) (seen.has(t.name) ? dup : seen).add(t.name);
  return dup;
}

/** A reserved name, exactly or as the suffix after any `<prefix>_` (case-insensitive: fail closed). */
export function isReserved(name: string, reserved: readonly string[]): boolean {
  const lower = name.toLowerCase();
  return reserved.some((r) => lower === r || lower.endsWith(`_${r}`));
}

export function prefixed(name: string, prefix: string | undefined): string {
  return prefix ? `${prefix}_${name}` : name;
}

export function malformedReason(ui: ToolUiClass): Exclusion['reason'] | undefined {
  if (ui.kind !== 'malformed') return undefined;
  return ui.why === 'VISIBILITY' ? 'MALFORMED_VISIBILITY' : 'MALFORMED_UI_META';
}

const sha = (parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');

/** Identifies one composition of a toolset's catalog: the binding generation plus a digest of what was listed. */
export function catalogGenerationOf(bindingGeneration: number, listings: readonly Listing[]): string {
  const entries = listings.flatMap((l) => l.tools.map((t) => [l.generation.connectionClass, l.generation.generationId, t.name, t.fingerprint])).sort();
  return `${bindingGeneration}.${sha(entries).slice(0, 16)}`;
}

export function toHandle(c: Candidate, exposedName: string, catalogGeneration: string): BoundToolHandle {
  const g = c.generation;
  return {
    handleId: `th_${sha([c.toolsetId, g.connectionClass, g.generationId, g.fence, c.tool.name, exposedName, c.tool.fingerprint, catalogGeneration]).slice(0, 32)}`,
    toolsetId: c.toolsetId,
    nativeName: c.tool.name,
    exposedName,
    declaration: structuredClone(c.tool.declaration) as BoundToolHandle['declaration'],
    fingerprint: c.tool.fingerprint,
    visibility: [...c.tool.ui.visibility],
    resourceUri: c.tool.ui.kind === 'ui' ? c.tool.ui.resourceUri : null,
    catalogGeneration,
    connectionClass: g.connectionClass,
    execution: { generationId: g.generationId, fence: g.fence, ownerInstanceId: g.ownerInstanceId, bindingGeneration: g.bindingGeneration },
  };
}
