import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  CatalogApproveTool,
  CatalogModelCatalog,
  LifecycleGetSession,
  registryIdSchema,
  sessionIdSchema,
  type Principal,
  type ResponseOf,
} from '@apphost/contracts';
import { CurrentPrincipal, RequireScopes } from '../auth';
import { actingPrincipal, ownSessionKey, parseInput, sessionNotFound } from '../http/request-input';
import { approveBodySchema, catalogQuerySchema, toolMethodSchema, type PublicCatalog } from './catalog.schemas';

/**
 * `GET /v1/sessions/{id}/catalog`: the session's model catalog (model-visible tools only), from catalog-policy, with
 * the toolsets that could not be discovered in `unavailable` (still 200: one bad toolset never hides the others).
 */
@Controller('v1/sessions')
@RequireScopes('runtime')
export class CatalogController {
  constructor(@Inject(BusClient) private readonly bus: BusClient) {}

  @Get(':sessionId/catalog')
  async catalog(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Query() query: unknown): Promise<PublicCatalog> {
    const q = parseInput(catalogQuerySchema, query, 'query');
    const key = ownSessionKey(principal, q.appName, parseInput(sessionIdSchema, sessionId, 'session id'), q.userId);
    const view = await this.bus.request(LifecycleGetSession, { session: key });
    if (view.state !== 'ACTIVE') throw sessionNotFound();
    const catalog = await this.bus.request(CatalogModelCatalog, {
      principal: actingPrincipal(principal, key),
      session: { key, incarnation: view.incarnation },
      fresh: q.fresh === 'true',
    });
    return {
      sessionId: key.sessionId,
      appName: key.appName,
      incarnation: view.incarnation,
      tools: catalog.tools.map(toPublic),
      unavailable: catalog.unavailable,
    };
  }
}

/** `POST /v1/toolsets/{id}/tools/{name}:approve` (admin): re-approve a quarantined tool definition. */
@Controller('v1/toolsets')
@RequireScopes('admin')
export class ToolApprovalController {
  constructor(@Inject(BusClient) private readonly bus: BusClient) {}

  @Post(':toolsetId/tools/:toolMethod')
  @HttpCode(200)
  approve(
    @CurrentPrincipal() principal: Principal,
    @Param('toolsetId') toolsetId: string,
    @Param('toolMethod') toolMethod: string,
    @Body() body: unknown,
  ): Promise<ResponseOf<typeof CatalogApproveTool>> {
    const name = parseInput(toolMethodSchema, toolMethod, 'tool custom method').slice(0, -':approve'.length);
    const input = parseInput(approveBodySchema, body ?? {}, 'request body');
    return this.bus.request(CatalogApproveTool, {
      toolsetId: parseInput(registryIdSchema, toolsetId, 'toolset id'),
      name,
      fingerprint: input.fingerprint,
      approvedBy: `${principal.tenant}/${principal.subject}`,
    });
  }
}

function toPublic(h: ResponseOf<typeof CatalogModelCatalog>['tools'][number]): PublicCatalog['tools'][number] {
  const d = h.declaration as Record<string, unknown>;
  const pick = (k: string) => (d[k] !== undefined ? { [k]: d[k] } : {});
  return {
    name: h.exposedName,
    handleId: h.handleId,
    toolsetId: h.toolsetId,
    ...pick('description'),
    ...pick('inputSchema'),
    ...pick('outputSchema'),
    ...pick('annotations'),
    ...(h.resourceUri ? { resourceUri: h.resourceUri } : {}),
    connectionClass: h.connectionClass,
  } as PublicCatalog['tools'][number];
}
