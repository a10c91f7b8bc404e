import { Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import {
  CatalogAppCatalog,
  CatalogApproveTool,
  CatalogClassifyBatch,
  CatalogListPins,
  CatalogModelCatalog,
  type ParsedRequestOf,
  type ResponseOf,
} from '@apphost/contracts';
import { CatalogService } from '../discovery/catalog.service';
import { PinningService } from '../pinning/pinning.service';

/** catalog-policy's bus operations (queue group `catalog-policy`: any replica serves any request). */
@Injectable()
export class CatalogHandlers {
  constructor(
    private readonly catalogs: CatalogService,
    private readonly pinning: PinningService,
  ) {}

  @BusHandler(CatalogModelCatalog)
  modelCatalog(r: ParsedRequestOf<typeof CatalogModelCatalog>): Promise<ResponseOf<typeof CatalogModelCatalog>> {
    return this.catalogs.modelCatalog({ principal: r.principal, session: r.session }, r.toolsets, r.fresh);
  }

  @BusHandler(CatalogAppCatalog)
  appCatalog(r: ParsedRequestOf<typeof CatalogAppCatalog>): Promise<ResponseOf<typeof CatalogAppCatalog>> {
    return this.catalogs.appCatalog(r.generation, r.policy);
  }

  @BusHandler(CatalogClassifyBatch)
  classifyBatch(r: ParsedRequestOf<typeof CatalogClassifyBatch>): Promise<ResponseOf<typeof CatalogClassifyBatch>> {
    return this.catalogs.classifyBatch({ principal: r.principal, session: r.session }, r.toolsets, r.calls);
  }

  @BusHandler(CatalogApproveTool)
  async approveTool(r: ParsedRequestOf<typeof CatalogApproveTool>): Promise<ResponseOf<typeof CatalogApproveTool>> {
    const result = await this.pinning.approve(r.toolsetId, r.name, r.fingerprint, r.approvedBy);
    this.catalogs.invalidateToolset(r.toolsetId);
    return result;
  }

  @BusHandler(CatalogListPins)
  async listPins(r: ParsedRequestOf<typeof CatalogListPins>): Promise<ResponseOf<typeof CatalogListPins>> {
    return { pins: await this.pinning.list(r.toolsetId) };
  }
}
