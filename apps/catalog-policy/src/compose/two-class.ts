import type { Exclusion } from '@apphost/contracts';
import { duplicateNames, malformedReason, type Candidate, type ListedTool, type Listing } from './listing';

export interface Divergence {
  name: string;
  appSafeFingerprint: string;
  fullFingerprint: string | null;
}

export interface TwoClassResult {
  candidates: Candidate[];
  excluded: Exclusion[];
  /** UI tools whose full-class declaration differs (capability-adapted): the app-safe one wins; logged. */
  divergences: Divergence[];
}

/**
 * The deterministic two-class resolution (docs/architecture.md, "Catalog"): every tool resolves to exactly one
 * connection class, the same on every listing. The app-safe listing decides UI-associated tools (its
 * declaration wins, divergence logged); non-UI tools execute on the full class and take its declaration. Fails
 * closed per tool: non-UI on app-safe but UI on full, UI only on the full class (CLASS_DISAGREEMENT); non-UI only
 * on the app-safe class (CLASS_MISSING: it would execute where it was never listed); duplicates; malformed metadata.
 */
export function resolveTwoClass(toolsetId: string, appSafe: Listing, full: Listing): TwoClassResult {
  const excluded: Exclusion[] = [];
  const candidates: Candidate[] = [];
  const divergences: Divergence[] = [];
  const dup = new Set([...duplicateNames(appSafe.tools), ...duplicateNames(full.tools)]);
  const a = new Map(appSafe.tools.map((t) => [t.name, t]));
  const f = new Map(full.tools.map((t) => [t.name, t]));
  const names = [...new Set([...a.keys(), ...f.keys()])];
  const exclude = (name: string, reason: Exclusion['reason']) => excluded.push({ toolsetId, name, reason });

  for (const name of names) {
    if (dup.has(name)) {
      exclude(name, 'DUPLICATE_NAME');
      continue;
    }
    const onA = a.get(name);
    const onF = f.get(name);
    const malformed = (onA && malformedReason(onA.ui)) || (onF && malformedReason(onF.ui));
    if (malformed) {
      exclude(name, malformed);
      continue;
    }
    if (onA?.ui.kind === 'ui') {
      if (onF && onF.fingerprint !== onA.fingerprint) divergences.push({ name, appSafeFingerprint: onA.fingerprint, fullFingerprint: onF.fingerprint });
      candidates.push(candidate(toolsetId, onA, appSafe));
    } else if (onA) {
      if (!onF) exclude(name, 'CLASS_MISSING');
      else if (onF.ui.kind === 'ui') exclude(name, 'CLASS_DISAGREEMENT');
      else candidates.push(candidate(toolsetId, onF, full));
    } else if (onF) {
      if (onF.ui.kind === 'ui') exclude(name, 'CLASS_DISAGREEMENT');
      else candidates.push(candidate(toolsetId, onF, full));
    }
  }
  return { candidates, excluded, divergences };
}

/** One class only (an app catalog on a View's bound generation): every well-formed, unambiguous tool. */
export function resolveOneClass(toolsetId: string, listing: Listing): { candidates: Candidate[]; excluded: Exclusion[] } {
  const dup = duplicateNames(listing.tools);
  const excluded: Exclusion[] = [];
  const candidates: Candidate[] = [];
  for (const t of listing.tools) {
    const malformed = malformedReason(t.ui);
    if (dup.has(t.name)) {
      if (!excluded.some((e) => e.name === t.name)) excluded.push({ toolsetId, name: t.name, reason: 'DUPLICATE_NAME' });
    } else if (malformed) excluded.push({ toolsetId, name: t.name, reason: malformed });
    else candidates.push(candidate(toolsetId, t, listing));
  }
  return { candidates, excluded };
}

function candidate(toolsetId: string, tool: ListedTool, listing: Listing): Candidate {
  return { toolsetId, tool: tool as Candidate['tool'], generation: listing.generation };
}
