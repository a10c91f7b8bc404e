import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  CatalogReasons,
  ConnListTools,
  RegistryDiscoverToolset,
  RegistryGetToolset,
  type BoundGeneration,
  type DiscoveredToolset,
  type ResponseOf,
  type CatalogAudience,
  type GenerationHandle,
  type ToolsetSelection,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import type { Logger } from '@apphost/runtime';
import { CATALOG_CONFIG, CATALOG_LOGGER } from '../catalog.tokens';
import type { CatalogConfig } from '../catalog.config';
import { toListing, type Listing } from '../compose/listing';

/**
 * Discovery through the binding registry: it owns the connections and enforces the profile's discovery bounds
 * (pages, items, bytes, time, repeated cursors) on every listing; any violation or failure reaches the caller as
 * a typed error and nothing partial is ever used.
 */
@Injectable()
export class RegistryDiscovery {
  constructor(
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(CATALOG_CONFIG) private readonly config: CatalogConfig,
    @Inject(CATALOG_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * The developer selection as it takes effect: what the caller (or the app's configuration) names, with the
   * toolset spec's own tool filter and name prefix filling whatever it leaves out. The spec's list-cache TTL is
   * applied only when positive: its default, 0, means "not declared", so the catalog's own TTL stays in force.
   */
  async effectiveSelection(selection: ToolsetSelection): Promise<ToolsetSelection> {
    let spec;
    try {
      spec = (await this.bus.request(RegistryGetToolset, { toolsetId: selection.toolsetId }, { timeoutMs: this.config.registryTimeoutMs })).selection;
    } catch (error) {
      throw asTyped(error, 'the toolset spec could not be read');
    }
    return effectiveOf(selection, spec);
  }

  /**
   * Fresh discovery of both classes of a toolset in one registry request (`discover-toolset`: acquire, list and
   * release per class, on the registry side), with the toolset's facts read by the same request. A listing served
   * by one connection for both classes is fingerprinted once. Any failure of either class fails the toolset.
   */
  async discover(toolsetId: string, audience: CatalogAudience): Promise<DiscoveredListings> {
    let discovered: ResponseOf<typeof RegistryDiscoverToolset>;
    try {
      discovered = await this.bus.request(
        RegistryDiscoverToolset,
        {
          toolsetId,
          connectionClasses: ['app-safe', 'full'],
          principal: audience.principal,
          session: audience.session,
          holder: { kind: 'runner', id: 'catalog-policy' },
        },
        // One request now spans what were an acquire, a listing and a release per class.
        { timeoutMs: 2 * this.config.registryTimeoutMs },
      );
    } catch (error) {
      this.logger.warn({ toolsetId, error: describe(error) }, 'toolset discovery failed');
      throw asTyped(error, `toolset ${toolsetId} could not be discovered`);
    }
    const listed = new Map<number, Listing['tools']>();
    const listingOf = (i: number): Listing => {
      const { generation, listing } = discovered.classes[i];
      const bound = toBound(generation);
      let tools = listed.get(listing);
      if (!tools) {
        const raw = discovered.listings[listing].tools;
        if (raw.length > this.config.maxTools) {
          throw new AppHostError('RESOURCE_EXHAUSTED', `the listing has ${raw.length} tools, over ${this.config.maxTools}`, {
            details: CatalogReasons.details('DISCOVERY_MAX_ITEMS'),
          });
        }
        try {
          tools = toListing(bound, raw).tools;
        } catch (error) {
          throw asTyped(error, 'a tool declaration cannot be fingerprinted');
        }
        listed.set(listing, tools);
      }
      return { generation: bound, tools };
    };
    return { toolset: discovered.toolset, appSafe: listingOf(0), full: listingOf(1) };
  }

  /** A fresh, fully paginated listing on exactly this generation. */
  async list(generation: BoundGeneration): Promise<Listing> {
    let tools: Record<string, unknown>[];
    try {
      ({ tools } = await requestOnGeneration(this.bus, ConnListTools, generation, {}, { timeoutMs: this.config.registryTimeoutMs }));
    } catch (error) {
      this.logger.warn({ toolsetId: generation.toolsetId, generationId: generation.generationId, error: describe(error) }, 'tool listing denied');
      throw asTyped(error, 'tool listing failed');
    }
    if (tools.length > this.config.maxTools) {
      throw new AppHostError('RESOURCE_EXHAUSTED', `the listing has ${tools.length} tools, over ${this.config.maxTools}`, {
        details: CatalogReasons.details('DISCOVERY_MAX_ITEMS'),
      });
    }
    try {
      return toListing(generation, tools);
    } catch (error) {
      throw asTyped(error, 'a tool declaration cannot be fingerprinted');
    }
  }
}

/** Both classes of one toolset as one discovery listed them, and the toolset's facts read with them. */
export interface DiscoveredListings {
  toolset: DiscoveredToolset;
  appSafe: Listing;
  full: Listing;
}

/**
 * The developer selection as it takes effect, from the caller's (or the app's) and the spec's own selection. The
 * spec's list-cache TTL is applied only when positive (0 means "not declared"). Absent stays absent (no undefined
 * members): selections are canonicalized into cache keys.
 */
export function effectiveOf(selection: ToolsetSelection, spec: DiscoveredToolset['selection']): ToolsetSelection {
  const toolFilter = selection.toolFilter ?? spec?.toolFilter;
  const namePrefix = selection.namePrefix ?? spec?.namePrefix;
  const cacheTtlMs = selection.cacheTtlMs ?? (spec && spec.listCacheTtlMs > 0 ? spec.listCacheTtlMs : undefined);
  return {
    toolsetId: selection.toolsetId,
    ...(toolFilter !== undefined ? { toolFilter } : {}),
    ...(namePrefix !== undefined ? { namePrefix } : {}),
    ...(cacheTtlMs !== undefined ? { cacheTtlMs } : {}),
  };
}

export function toBound(h: Omit<GenerationHandle, 'leaseId'>): BoundGeneration {
  return {
    generationId: h.generationId,
    fence: h.fence,
    ownerInstanceId: h.ownerInstanceId,
    toolsetId: h.toolsetId,
    bindingGeneration: h.bindingGeneration,
    connectionClass: h.connectionClass,
  };
}

function asTyped(error: unknown, message: string): AppHostError {
  if (error instanceof AppHostError) return error;
  return new AppHostError('INTERNAL', message, { details: CatalogReasons.details('DISCOVERY_FAILED') });
}

function describe(error: unknown): string {
  return error instanceof AppHostError ? `${error.code}: ${error.message}` : String(error);
}
