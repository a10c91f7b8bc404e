import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  CatalogReasons,
  ConnListTools,
  ConnRelease,
  RegistryAcquireGeneration,
  RegistryGetToolset,
  type BoundGeneration,
  type CatalogAudience,
  type GenerationHandle,
  type ToolsetSelection,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import type { Logger } from '@apphost/runtime';
import { CATALOG_CONFIG, CATALOG_LOGGER } from '../catalog.tokens';
import type { CatalogConfig } from '../catalog.config';
import { toListing, type Listing } from '../compose/listing';

type ConnectionClass = BoundGeneration['connectionClass'];

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
    const toolFilter = selection.toolFilter ?? spec?.toolFilter;
    const namePrefix = selection.namePrefix ?? spec?.namePrefix;
    const cacheTtlMs = selection.cacheTtlMs ?? (spec && spec.listCacheTtlMs > 0 ? spec.listCacheTtlMs : undefined);
    // Absent stays absent (no undefined members): selections are canonicalized into cache keys.
    return {
      toolsetId: selection.toolsetId,
      ...(toolFilter !== undefined ? { toolFilter } : {}),
      ...(namePrefix !== undefined ? { namePrefix } : {}),
      ...(cacheTtlMs !== undefined ? { cacheTtlMs } : {}),
    };
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

  /** Acquires the audience's generation of a class, lists it, and releases the lease (the handle stays addressable). */
  async acquireAndList(toolsetId: string, connectionClass: ConnectionClass, audience: CatalogAudience): Promise<Listing> {
    const handle = await this.acquire(toolsetId, connectionClass, audience);
    try {
      return await this.list(toBound(handle));
    } finally {
      await this.release(handle);
    }
  }

  private async acquire(toolsetId: string, connectionClass: ConnectionClass, audience: CatalogAudience): Promise<GenerationHandle> {
    try {
      return await this.bus.request(
        RegistryAcquireGeneration,
        { toolsetId, connectionClass, principal: audience.principal, session: audience.session, holder: { kind: 'runner', id: 'catalog-policy' } },
        { timeoutMs: this.config.registryTimeoutMs },
      );
    } catch (error) {
      throw asTyped(error, `no ${connectionClass} connection generation for toolset ${toolsetId}`);
    }
  }

  private async release(handle: GenerationHandle): Promise<void> {
    await requestOnGeneration(this.bus, ConnRelease, toBound(handle), { leaseId: handle.leaseId }, { timeoutMs: this.config.registryTimeoutMs }).catch(
      (error: unknown) => {
        this.logger.debug({ generationId: handle.generationId, error: describe(error) }, 'lease release failed (the generation is gone or evicts on its own)');
      },
    );
  }
}

export function toBound(h: GenerationHandle): BoundGeneration {
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
