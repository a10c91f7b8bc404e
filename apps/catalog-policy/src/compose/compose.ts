import type { AppCallPolicy, BoundToolHandle, Exclusion, ToolsetSelection } from '@apphost/contracts';
import { isReserved, prefixed, toHandle, type Candidate } from './listing';

/** Whether a tool's current definition is quarantined (drifted from its approved fingerprint) on its class. */
export type QuarantineCheck = (c: Candidate) => boolean;

export interface Composition {
  tools: BoundToolHandle[];
  excluded: Exclusion[];
}

/**
 * Model catalog of one toolset: developer selection ∩ `model` visibility, prefixed names; reserved names (native or
 * prefixed) and quarantined tools excluded.
 */
export function composeModelCatalog(
  candidates: readonly Candidate[],
  selection: ToolsetSelection,
  reserved: readonly string[],
  quarantined: QuarantineCheck,
  catalogGeneration: string,
): Composition {
  const tools: BoundToolHandle[] = [];
  const excluded: Exclusion[] = [];
  const filter = selection.toolFilter ? new Set(selection.toolFilter) : undefined;
  for (const c of candidates) {
    const exposed = prefixed(c.tool.name, selection.namePrefix);
    const reason: Exclusion['reason'] | undefined =
      isReserved(c.tool.name, reserved) || isReserved(exposed, reserved)
        ? 'RESERVED_NAME'
        : filter && !filter.has(c.tool.name)
          ? 'NOT_SELECTED'
          : !c.tool.ui.visibility.includes('model')
            ? 'NOT_VISIBLE'
            : quarantined(c)
              ? 'QUARANTINED'
              : undefined;
    if (reason) excluded.push({ toolsetId: c.toolsetId, name: c.tool.name, reason });
    else tools.push(toHandle(c, exposed, catalogGeneration));
  }
  return { tools, excluded };
}

/**
 * App catalog of a View's bound generation: app-call policy ∩ `app` visibility, native names; reserved names and
 * quarantined tools excluded.
 */
export function composeAppCatalog(
  candidates: readonly Candidate[],
  policy: AppCallPolicy,
  reserved: readonly string[],
  quarantined: QuarantineCheck,
  catalogGeneration: string,
): Composition {
  const tools: BoundToolHandle[] = [];
  const excluded: Exclusion[] = [];
  const allowed = (name: string) => policy.mode === 'all-app-visible' || (policy.mode === 'allow' && policy.names.includes(name));
  for (const c of candidates) {
    const reason: Exclusion['reason'] | undefined = isReserved(c.tool.name, reserved)
      ? 'RESERVED_NAME'
      : !c.tool.ui.visibility.includes('app')
        ? 'NOT_VISIBLE'
        : !allowed(c.tool.name)
          ? 'NOT_ALLOWED_BY_APP_POLICY'
          : quarantined(c)
            ? 'QUARANTINED'
            : undefined;
    if (reason) excluded.push({ toolsetId: c.toolsetId, name: c.tool.name, reason });
    else tools.push(toHandle(c, c.tool.name, catalogGeneration));
  }
  return { tools, excluded };
}

/** Exposed names that collide across toolsets are ambiguous: every colliding entry is dropped (fail closed). */
export function dropCollisions(parts: readonly Composition[]): Composition {
  const all = parts.flatMap((p) => p.tools);
  const count = new Map<string, number>();
  for (const t of all) count.set(t.exposedName, (count.get(t.exposedName) ?? 0) + 1);
  return {
    tools: all.filter((t) => count.get(t.exposedName) === 1),
    excluded: [
      ...parts.flatMap((p) => p.excluded),
      ...all.filter((t) => (count.get(t.exposedName) ?? 0) > 1).map((t) => ({ toolsetId: t.toolsetId, name: t.nativeName, reason: 'DUPLICATE_NAME' as const })),
    ],
  };
}
