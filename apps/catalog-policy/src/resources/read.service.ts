import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import { ConnReadResource, type BoundGeneration, type CatalogReadResource, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import type { Logger } from '@apphost/runtime';
import { CATALOG_CONFIG, CATALOG_LOGGER } from '../catalog.tokens';
import type { CatalogConfig } from '../catalog.config';
import { admitReadRequest, checkReadResponse } from './read-policy';

/** `resources/read` on a bound generation with the resource policy enforced on the request and on every returned item. */
@Injectable()
export class ReadService {
  constructor(
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(CATALOG_CONFIG) private readonly config: CatalogConfig,
    @Inject(CATALOG_LOGGER) private readonly logger: Logger,
  ) {}

  async read(r: ParsedRequestOf<typeof CatalogReadResource>): Promise<ResponseOf<typeof CatalogReadResource>> {
    const generation: BoundGeneration = r.generation;
    const uri = admitReadRequest(r.policy, r.uri);
    const answer = await requestOnGeneration(
      this.bus,
      ConnReadResource,
      generation,
      { uri, ...(r.textReferenceFromBytes === undefined ? {} : { textReferenceFromBytes: r.textReferenceFromBytes }) },
      { timeoutMs: this.config.registryTimeoutMs },
    );
    const limits = {
      maxItemBytes: Math.min(r.limits?.maxItemBytes ?? Infinity, this.config.readMaxItemBytes),
      maxTotalBytes: Math.min(r.limits?.maxTotalBytes ?? Infinity, this.config.readMaxTotalBytes),
    };
    try {
      return { ...checkReadResponse(r.policy, answer.contents, limits), ...cacheHintsOf(answer) };
    } catch (error) {
      this.logger.warn({ toolsetId: generation.toolsetId, uri, error: (error as Error).message }, 'resource read rejected by response-side policy');
      throw error;
    }
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
