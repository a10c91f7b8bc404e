import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Post, Query, Res, type StreamableFile } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  GovernedCloseView,
  GovernedGetView,
  GovernedOpenView,
  GovernedRenewView,
  GovernedReplayView,
  type OpenViewResponse,
  type Principal,
  type ResponseOf,
  type ViewSnapshot,
} from '@apphost/contracts';
import { BrowserRoute, CurrentPrincipal, RequireScopes, SCOPES } from '../auth';
import { ownSessionKey, parseInput, viewCallerOf } from '../http/request-input';
import { splicedJson, type JsonSplice } from '../http/spliced-json';
import { renderDocument } from './view-document';
import { grantOf } from './view-grant';
import {
  openViewBodySchema,
  renewViewBodySchema,
  type ReplayViewReply,
  replayViewBodySchema,
  VIEW_GRANT_HEADER,
  viewIdParamSchema,
  viewMethodSegmentSchema,
  viewQuerySchema,
} from './views.schemas';

/** A bootstrap reads the document and the sealed result; a replay runs a tool: both as long as the request's deadline allows. */
const UNTIL_DEADLINE = { timeoutMs: 'until-deadline' } as const;

// Structural slice of express' response: the status of an open depends on the answer's mode.
interface StatusResponse {
  status(code: number): unknown;
  setHeader(name: string, value: string): unknown;
}

/**
 * The View routes (scope `view`, browser routes: a present Origin must be allowlisted, a write must carry one).
 * `POST /v1/views` bootstraps the View of a widget (201 live, 200 placeholder); `GET`/`DELETE /v1/views/{viewId}` read
 * and close it; `POST /v1/views/{viewId}:renew` extends its lease with the grant from `X-AppHost-View-Grant`;
 * `:refresh` and `:rerun` replay a placeholder's tool as a new invocation. governed-operations decides everything;
 * the gateway resolves the caller and validates input. Answers carrying a grant are never cached.
 */
@Controller('v1/views')
@RequireScopes(SCOPES.view)
@BrowserRoute()
export class ViewsController {
  constructor(@Inject(BusClient) private readonly bus: BusClient) {}

  @Post()
  async open(
    @CurrentPrincipal() principal: Principal,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: StatusResponse,
  ): Promise<OpenViewResponse | StreamableFile> {
    const input = parseInput(openViewBodySchema, body ?? {}, 'request body');
    // The same rule as every session route: the token's tenant, its own user (or the one a delegate names), and a
    // view token only for the one session it was minted for; anything else is 404.
    const session = ownSessionKey(principal, input.appName, input.sessionId, input.userId);
    const caller = viewCallerOf(principal, input.userId);
    const answer = await this.bus.request(
      GovernedOpenView,
      { caller, session, eventId: input.eventId, functionCallId: input.functionCallId, ...(input.hostContext ? { hostContext: input.hostContext } : {}) },
      UNTIL_DEADLINE,
    );
    const rendered = await renderDocument(this.bus, answer, caller);
    res.status(rendered.view.mode === 'live' ? 201 : 200);
    res.setHeader('Cache-Control', 'no-store');
    return replyOf(rendered.view, rendered.splice);
  }

  @Get(':viewId')
  get(@CurrentPrincipal() principal: Principal, @Param('viewId') viewId: string, @Query() query: unknown): Promise<ViewSnapshot> {
    const q = parseInput(viewQuerySchema, query, 'query');
    return this.bus.request(GovernedGetView, { caller: viewCallerOf(principal, q.userId), viewId: parseInput(viewIdParamSchema, viewId, 'view id') });
  }

  /** 204 whether this call closed it or it was closed (or revoked) already; a View the caller may not see is 404. */
  @Delete(':viewId')
  @HttpCode(204)
  async close(@CurrentPrincipal() principal: Principal, @Param('viewId') viewId: string, @Query() query: unknown): Promise<void> {
    const q = parseInput(viewQuerySchema, query, 'query');
    await this.bus.request(GovernedCloseView, { caller: viewCallerOf(principal, q.userId), viewId: parseInput(viewIdParamSchema, viewId, 'view id') });
  }

  /** `:renew`, `:refresh` and `:rerun` arrive in the same path segment as the id. */
  @Post(':viewId')
  @HttpCode(200)
  async method(
    @CurrentPrincipal() principal: Principal,
    @Param('viewId') segment: string,
    @Headers(VIEW_GRANT_HEADER) grantHeader: string | undefined,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: StatusResponse,
  ): Promise<ResponseOf<typeof GovernedRenewView> | ReplayViewReply | StreamableFile> {
    const { viewId, method } = parseInput(viewMethodSegmentSchema, segment, 'view custom method');
    if (method === 'renew') {
      const input = parseInput(renewViewBodySchema, body ?? {}, 'request body');
      return this.bus.request(GovernedRenewView, { caller: viewCallerOf(principal, input.userId), viewId, grant: grantOf(grantHeader) });
    }
    const input = parseInput(replayViewBodySchema, body ?? {}, 'request body');
    const caller = viewCallerOf(principal, input.userId);
    const replay = await this.bus.request(
      GovernedReplayView,
      {
        caller,
        viewId,
        action: method,
        invocationId: input.invocationId ?? `${viewId}:${method}`,
        ...(input.hostContext ? { hostContext: input.hostContext } : {}),
      },
      UNTIL_DEADLINE,
    );
    res.setHeader('Cache-Control', 'no-store');
    const rendered = replay.view && (await renderDocument(this.bus, replay.view, caller));
    return replyOf({ ...replay, view: rendered ? rendered.view : null }, rendered?.splice);
  }
}

/** The answer as it is, or with its View's document spliced in as the literal the owner held. */
function replyOf<T>(answer: T, splice: JsonSplice | undefined): T | StreamableFile {
  return splice ? splicedJson(answer, splice) : answer;
}
