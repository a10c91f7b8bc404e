import { canonicalize } from '@apphost/canonical-json';
import type { CatalogAudience, ResponseOf, ToolsetSelection, CatalogModelCatalog } from '@apphost/contracts';

type ModelCatalog = ResponseOf<typeof CatalogModelCatalog>;

/**
 * The TTL cache of composed model catalogs (never of app catalogs, batch classifications or reads). Keyed by the
 * principal, the session incarnation and the exact selections; bounded (oldest entry evicted first).
 */
export class ModelCatalogCache {
  private readonly entries = new Map<string, { expiresAt: number; value: ModelCatalog; toolsets: Set<string> }>();

  constructor(private readonly maxEntries: number) {}

  static key(audience: CatalogAudience, selections: readonly ToolsetSelection[]): string {
    return canonicalize({ p: [audience.principal.tenant, audience.principal.subject], s: audience.session, t: selections });
  }

  get(key: string, now = Date.now()): ModelCatalog | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: ModelCatalog, ttlMs: number, now = Date.now()): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, {
      expiresAt: now + ttlMs,
      value,
      toolsets: new Set(value.tools.map((t) => t.toolsetId).concat(value.excluded.map((e) => e.toolsetId))),
    });
  }

  /** After an approval: this replica stops serving catalogs of the toolset at once (others within their TTL). */
  invalidateToolset(toolsetId: string): void {
    for (const [key, entry] of this.entries) if (entry.toolsets.has(toolsetId)) this.entries.delete(key);
  }
}
