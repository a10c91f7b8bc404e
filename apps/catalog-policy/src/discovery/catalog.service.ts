import { randomUUID, createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { canonicalize } from '@apphost/canonical-json';
import {
  AppHostError,
  CatalogReasons,
  type AppCallPolicy,
  type BoundGeneration,
  type CatalogAudience,
  type CatalogAppCatalog,
  type CatalogClassifyBatch,
  type CatalogModelCatalog,
  type DiscoveredToolset,
  type ResponseOf,
  type ToolsetSelection,
  type UnavailableToolset,
} from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { CATALOG_CONFIG, CATALOG_LOGGER } from '../catalog.tokens';
import type { CatalogConfig } from '../catalog.config';
import { composeAppCatalog, composeModelCatalog, dropCollisions, type Composition } from '../compose/compose';
import { catalogGenerationOf } from '../compose/listing';
import { resolveOneClass, resolveTwoClass } from '../compose/two-class';
import { PinningService } from '../pinning/pinning.service';
import { ModelCatalogCache } from './model-catalog-cache';
import { effectiveOf, RegistryDiscovery } from './registry-client';

type ModelCatalog = ResponseOf<typeof CatalogModelCatalog>;
type ModelComposition = Composition & {
  unavailable: UnavailableToolset[];
  /** The facts of each discovered toolset, read by its discovery request. */
  toolsets: DiscoveredToolset[];
  /** The effective selection of each discovered toolset. */
  selections: Map<string, ToolsetSelection>;
};

/** The model catalog, the app catalog and batch classification, all composed from fresh registry listings. */
@Injectable()
export class CatalogService {
  private readonly cache: ModelCatalogCache;

  constructor(
    private readonly discovery: RegistryDiscovery,
    private readonly pinning: PinningService,
    @Inject(CATALOG_CONFIG) private readonly config: CatalogConfig,
    @Inject(CATALOG_LOGGER) private readonly logger: Logger,
  ) {
    this.cache = new ModelCatalogCache(config.modelCacheMaxEntries);
  }

  async modelCatalog(audience: CatalogAudience, toolsets: ToolsetSelection[] | undefined, fresh: boolean): Promise<ModelCatalog> {
    const selections = await this.selectionsFor(audience, toolsets);
    const key = ModelCatalogCache.key(audience, selections);
    const hit = fresh ? undefined : this.cache.get(key);
    if (hit) return { ...hit, cached: true };
    const { toolsets: _facts, selections: _effective, ...composed } = await this.composeModel(audience, selections);
    const value: ModelCatalog = { ...composed, cached: false, composedAt: new Date().toISOString() };
    // A toolset that failed may be back in a second: a partial catalog is served, never cached.
    if (composed.unavailable.length > 0) return value;
    this.cache.set(key, value, Math.min(...selections.map((s) => s.cacheTtlMs ?? this.config.modelCacheTtlMs), this.config.modelCacheTtlMs));
    return value;
  }

  /** App admission: a fresh listing on exactly the View's bound generation; never cached, never partial. */
  async appCatalog(generation: BoundGeneration, policy: AppCallPolicy): Promise<ResponseOf<typeof CatalogAppCatalog>> {
    const pins = this.pinning.prefetch(generation.toolsetId, [generation.connectionClass]);
    const listing = await this.discovery.list(generation);
    const { candidates, excluded } = resolveOneClass(generation.toolsetId, listing);
    const quarantined = await this.pinning.evaluate(generation.toolsetId, candidates, pins);
    const composed = composeAppCatalog(
      candidates,
      policy,
      this.config.reservedNames,
      quarantined,
      catalogGenerationOf(generation.bindingGeneration, [listing]),
    );
    this.logExclusions(excluded.concat(composed.excluded), 'app');
    return { tools: composed.tools, excluded: [...excluded, ...composed.excluded] };
  }

  /** Batch admission: the same two-class algorithm, fresh; one immutable snapshot of the exact handles. */
  async classifyBatch(
    audience: CatalogAudience,
    toolsets: ToolsetSelection[] | undefined,
    calls: { callId: string; name: string }[],
  ): Promise<ResponseOf<typeof CatalogClassifyBatch>> {
    // No spec read first: each toolset's discovery request returns its spec's selection with its listings.
    const named = toolsets ?? this.config.appToolsets.get(audience.session.key.appName) ?? [];
    const catalog = await this.composeModel(audience, named);
    const selections = await this.selectionsOfComposed(named, catalog);
    const byName = new Map(catalog.tools.map((t) => [t.exposedName, t]));
    const unreachable = calls.flatMap((c) => {
      const toolsetIds = byName.has(c.name) ? [] : mayBelongTo(c.name, selections, catalog.unavailable);
      return toolsetIds.length ? [{ callId: c.callId, name: c.name, toolsetIds }] : [];
    });
    const missing = calls.filter((c) => !byName.has(c.name) && !unreachable.some((u) => u.callId === c.callId));
    if (missing.length) {
      const disagreeing = missing.filter((c) =>
        catalog.excluded.some(
          (e) => e.reason === 'CLASS_DISAGREEMENT' && selections.some((s) => (s.namePrefix ? `${s.namePrefix}_${e.name}` : e.name) === c.name),
        ),
      );
      const reason = disagreeing.length ? 'TOOL_CLASS_DISAGREEMENT' : 'TOOL_NOT_IN_CATALOG';
      throw new AppHostError(
        'FAILED_PRECONDITION',
        `the batch names tools that are not in the current model catalog: ${missing.map((c) => c.name).join(', ')}`,
        {
          details: CatalogReasons.details(reason, { callIds: missing.map((c) => c.callId) }),
        },
      );
    }
    const entries = calls.flatMap((c) => {
      const handle = byName.get(c.name);
      if (!handle) return [];
      return [{ callId: c.callId, name: c.name, uiAssociated: handle.resourceUri !== null, handle }];
    });
    const ui = entries.filter((e) => e.uiAssociated).length;
    const classification = ui === 0 ? 'non-ui' : ui === entries.length ? 'ui' : 'mixed';
    const snapshotDigest = createHash('sha256')
      .update(canonicalize(entries.map((e) => [e.callId, e.name, e.handle.handleId, e.handle.fingerprint])))
      .digest('hex');
    const used = new Set(entries.map((e) => e.handle.toolsetId));
    return deepFreeze({
      snapshotId: randomUUID(),
      snapshotDigest,
      classification,
      calls: entries,
      unavailable: catalog.unavailable,
      unreachable,
      createdAt: new Date().toISOString(),
      toolsets: catalog.toolsets.filter((t) => used.has(t.toolsetId)),
    });
  }

  invalidateToolset(toolsetId: string): void {
    this.cache.invalidateToolset(toolsetId);
  }

  /** The caller's selections, else the app's configured ones, each completed from its toolset spec. */
  private selectionsFor(audience: CatalogAudience, toolsets: ToolsetSelection[] | undefined): Promise<ToolsetSelection[]> {
    const named = toolsets ?? this.config.appToolsets.get(audience.session.key.appName) ?? [];
    return Promise.all(named.map((selection) => this.discovery.effectiveSelection(selection)));
  }

  /**
   * The effective selections of a composed catalog: the ones its discoveries used, and for a toolset that could not
   * be discovered its spec's, read on its own (a spec that cannot be read fails the request, as it always did).
   */
  private selectionsOfComposed(named: readonly ToolsetSelection[], catalog: ModelComposition): Promise<ToolsetSelection[]> {
    return Promise.all(named.map((n) => catalog.selections.get(n.toolsetId) ?? this.discovery.effectiveSelection(n)));
  }

  /**
   * Every selected toolset composed on its own (concurrently): one that cannot be discovered is reported, never fatal.
   * `selections` may be the caller's own: each is completed from the spec its discovery returns.
   */
  private async composeModel(audience: CatalogAudience, selections: readonly ToolsetSelection[]): Promise<ModelComposition> {
    const settled = await Promise.all(
      selections.map((selection) =>
        this.composeToolset(audience, selection).then(
          (part) => ({ part }),
          (error: unknown) => ({ unavailable: unavailableEntry(selection.toolsetId, error) }),
        ),
      ),
    );
    const parts = settled.flatMap((s) => ('part' in s ? [s.part] : []));
    const unavailable = settled.flatMap((s) => ('unavailable' in s ? [s.unavailable] : []));
    if (unavailable.length) this.logger.warn({ unavailable }, 'toolsets unavailable: the catalog is served without their tools');
    const merged = dropCollisions(parts);
    this.logExclusions(merged.excluded, 'model');
    return {
      ...merged,
      unavailable,
      toolsets: parts.map((p) => p.toolset),
      selections: new Map(parts.map((p) => [p.selection.toolsetId, p.selection])),
    };
  }

  private async composeToolset(
    audience: CatalogAudience,
    named: ToolsetSelection,
  ): Promise<Composition & { toolset: DiscoveredToolset; selection: ToolsetSelection }> {
    // Both classes must list completely, or the toolset has no tools in the catalog. One registry request lists
    // both (concurrently on its side, once when one connection serves both); the rule that the app-safe class decides
    // UI tools is in resolveTwoClass, and the app-safe class's failure is the one reported when both fail.
    const pins = this.pinning.prefetch(named.toolsetId, ['app-safe', 'full']);
    const { toolset, appSafe, full } = await this.discovery.discover(named.toolsetId, audience);
    const selection = effectiveOf(named, toolset.selection);
    if (appSafe.generation.bindingGeneration !== full.generation.bindingGeneration) {
      throw new AppHostError('FAILED_PRECONDITION', 'the binding changed between the two listings; retry with a fresh catalog', {
        details: CatalogReasons.details('BINDING_CHANGED_DURING_DISCOVERY', { toolsetId: selection.toolsetId }),
      });
    }
    const resolved = resolveTwoClass(selection.toolsetId, appSafe, full);
    for (const d of resolved.divergences)
      this.logger.info({ toolsetId: selection.toolsetId, ...d }, 'capability-adapted declaration: the app-safe declaration wins for a UI tool');
    const quarantined = await this.pinning.evaluate(selection.toolsetId, resolved.candidates, pins);
    const composed = composeModelCatalog(
      resolved.candidates,
      selection,
      this.config.reservedNames,
      quarantined,
      catalogGenerationOf(appSafe.generation.bindingGeneration, [appSafe, full]),
    );
    return { tools: composed.tools, excluded: [...resolved.excluded, ...composed.excluded], toolset, selection };
  }

  private logExclusions(excluded: readonly { toolsetId: string; name: string; reason: string }[], catalog: 'model' | 'app'): void {
    const loud = excluded.filter((e) => e.reason !== 'NOT_SELECTED' && e.reason !== 'NOT_VISIBLE' && e.reason !== 'NOT_ALLOWED_BY_APP_POLICY');
    if (loud.length) this.logger.warn({ catalog, excluded: loud }, 'tools excluded from the catalog');
  }
}

/** The toolset's discovery failure as the catalog reports it; the message names the toolset even when the error did not. */
function unavailableEntry(toolsetId: string, error: unknown): UnavailableToolset {
  const typed =
    error instanceof AppHostError ? error : new AppHostError('INTERNAL', 'discovery failed', { details: CatalogReasons.details('DISCOVERY_FAILED') });
  const reason = typeof typed.details?.['reason'] === 'string' ? typed.details['reason'] : 'DISCOVERY_FAILED';
  const message = typed.message.includes(toolsetId) ? typed.message : `toolset ${toolsetId}: ${typed.message}`;
  return { toolsetId, code: typed.code, reason: reason.slice(0, 64), message: message.slice(0, 1024) };
}

/** The unavailable toolsets an absent tool name may belong to: its name prefix matches, or the toolset has none. */
function mayBelongTo(name: string, selections: readonly ToolsetSelection[], unavailable: readonly UnavailableToolset[]): string[] {
  return unavailable
    .map((u) => u.toolsetId)
    .filter((toolsetId) => {
      const prefix = selections.find((s) => s.toolsetId === toolsetId)?.namePrefix;
      return prefix === undefined || name.startsWith(`${prefix}_`);
    });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
