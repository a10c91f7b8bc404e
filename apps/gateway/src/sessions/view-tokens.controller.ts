import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import { LifecycleGetSession, sessionIdSchema, type Principal } from '@apphost/contracts';
import { CurrentPrincipal, RequireScopes, SCOPES, ViewTokens } from '../auth';
import { ownSessionKey, parseInput, sessionNotFound } from '../http/request-input';
import { viewTokenBodySchema, type ViewTokenResponse } from './view-tokens.schemas';

/**
 * `POST /v1/sessions/{id}/view-tokens` (runtime scope): the runtime hands the browser a short-lived token that may
 * only render this session's Views (scope `view`, restricted to the session), so the user's browser never needs a
 * runtime credential. Allowed for the session's own user, or a delegate naming it; the session must be ACTIVE.
 * A view token itself cannot mint another: it lacks the runtime scope.
 */
@Controller('v1/sessions')
@RequireScopes(SCOPES.runtime)
export class ViewTokensController {
  constructor(
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(ViewTokens) private readonly viewTokens: ViewTokens,
  ) {}

  @Post(':sessionId/view-tokens')
  @HttpCode(201)
  async mint(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Body() body: unknown): Promise<ViewTokenResponse> {
    const input = parseInput(viewTokenBodySchema, body ?? {}, 'request body');
    const key = ownSessionKey(principal, input.appName, parseInput(sessionIdSchema, sessionId, 'session id'), input.userId);
    const snapshot = await this.bus.request(LifecycleGetSession, { session: key });
    // Creating, deleting or deleted: nothing to render, and indistinguishable from absence.
    if (snapshot.state !== 'ACTIVE') throw sessionNotFound();
    const grant = { tenant: key.tenant, userId: key.userId, appName: key.appName, sessionId: key.sessionId, incarnation: snapshot.incarnation };
    const minted = await this.viewTokens.mint(grant, input.ttlSeconds);
    return { token: minted.token, expiresAt: minted.expiresAt, scope: 'view', sessionId: key.sessionId, appName: key.appName };
  }
}
