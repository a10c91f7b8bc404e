import { Controller, Get, Inject, Param, Query, Res } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import { GovernedGetModelContext, sessionIdSchema, type Principal, type ResponseOf } from '@apphost/contracts';
import { CurrentPrincipal, RequireScopes, SCOPES } from '../auth';
import { ownSessionKey, parseInput } from '../http/request-input';
import { modelContextQuerySchema } from './conversation.schemas';

interface HeaderResponse {
  setHeader(name: string, value: string): unknown;
}

/**
 * `GET /v1/sessions/{sessionId}/model-context` (scope `runtime`): what the model sees of the session's Views on its
 * next turn — one untrusted, per-widget delimited block (or null), the live registers and the evicted widgets.
 * governed-operations computes it from the live Views at every read; it changes with every commit, so never cached.
 */
@Controller('v1/sessions')
@RequireScopes(SCOPES.runtime)
export class ModelContextController {
  constructor(@Inject(BusClient) private readonly bus: BusClient) {}

  @Get(':sessionId/model-context')
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('sessionId') sessionId: string,
    @Query() query: unknown,
    @Res({ passthrough: true }) res: HeaderResponse,
  ): Promise<ResponseOf<typeof GovernedGetModelContext>> {
    const q = parseInput(modelContextQuerySchema, query, 'query');
    const session = ownSessionKey(principal, q.appName, parseInput(sessionIdSchema, sessionId, 'session id'), q.userId);
    const context = await this.bus.request(GovernedGetModelContext, { session });
    res.setHeader('Cache-Control', 'no-store');
    return context;
  }
}
