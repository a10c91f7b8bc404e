import { Controller, Headers, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { BusClient, RequestContexts } from '@apphost/bus';
import { AppHostError, GovernedViewRpc, type JsonRpcResponse, type Principal } from '@apphost/contracts';
import { SERVICE_CONTEXT, TIMEOUT_HEADER, type ServiceContext } from '@apphost/runtime';
import { BrowserRoute, CurrentPrincipal, RequireScopes, SCOPES } from '../auth';
import type { GatewaySettings } from '../gateway.config';
import { parseInput, viewCallerOf } from '../http/request-input';
import { viewRpcBodyOf } from './view-rpc.body';
import { tooLarge, viewRpcMessageOf } from './view-rpc.messages';
import { grantOf } from './view-grant';
import { VIEW_ATTESTED_HEADER, VIEW_GRANT_HEADER, viewAttestedHeaderSchema, viewIdParamSchema, viewQuerySchema } from './views.schemas';

// Structural slice of express' response: the status depends on the answer's kind.
interface StatusResponse {
  status(code: number): unknown;
  setHeader(name: string, value: string): unknown;
}

const STATUS_BY_KIND = { response: 200, accepted: 202, cancelled: 204 } as const;

/**
 * `POST /v1/views/{viewId}/rpc`: one JSON-RPC 2.0 message from a View (scope `view`, a browser route, the grant in
 * `X-AppHost-View-Grant`). Authentication, Origin and grant failures are HTTP error envelopes (401/403; an unknown or
 * foreign View 404); everything else is JSON-RPC: a response 200, a notification 202 with no body, a request the View
 * cancelled 204 with no body. A body that is not one JSON value is answered here (-32700); governed-operations judges
 * the rest. The route's deadline is GATEWAY_VIEW_RPC_TIMEOUT_MS (or the caller's shorter `x-apphost-timeout-ms`).
 */
@Controller('v1/views')
@RequireScopes(SCOPES.view)
@BrowserRoute()
export class ViewRpcController {
  constructor(
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext<GatewaySettings>,
  ) {}

  @Post(':viewId/rpc')
  async rpc(
    @CurrentPrincipal() principal: Principal,
    @Param('viewId') viewIdParam: string,
    @Query() query: unknown,
    @Headers(VIEW_GRANT_HEADER) grantHeader: string | undefined,
    @Headers(VIEW_ATTESTED_HEADER) attestedHeader: string | undefined,
    @Headers(TIMEOUT_HEADER) timeoutHeader: string | undefined,
    @Req() req: object,
    @Res({ passthrough: true }) res: StatusResponse,
  ): Promise<JsonRpcResponse | undefined> {
    const viewId = parseInput(viewIdParamSchema, viewIdParam, 'view id');
    const { userId } = parseInput(viewQuerySchema, query, 'query');
    const grant = grantOf(grantHeader);
    const attested = parseInput(viewAttestedHeaderSchema, attestedHeader, VIEW_ATTESTED_HEADER);
    res.setHeader('Cache-Control', 'no-store');
    res.status(200);
    const parsed = viewRpcMessageOf(viewRpcBodyOf(req));
    if (!('bytes' in parsed)) return parsed;

    const request = { caller: viewCallerOf(principal, userId), viewId, grant, message: parsed.message, bytes: parsed.bytes, attested };
    let answer;
    try {
      answer = await this.withRouteDeadline(timeoutHeader, () => this.bus.request(GovernedViewRpc, request, { timeoutMs: 'until-deadline' }));
    } catch (error) {
      // The bus carries no request over its payload limit: the message is too large for this deployment.
      if (error instanceof AppHostError && error.code === 'PAYLOAD_TOO_LARGE')
        return tooLarge(parsed.message, Number(error.details?.['limit']) || parsed.bytes);
      throw error;
    }
    res.status(STATUS_BY_KIND[answer.kind]);
    return answer.kind === 'response' ? answer.response : undefined;
  }

  /** Runs `fn` in this request's context with the route's own deadline (never later than the caller asked for). */
  private withRouteDeadline<T>(timeoutHeader: string | undefined, fn: () => Promise<T>): Promise<T> {
    const current = RequestContexts.current();
    if (!current) return fn();
    // The interceptor already refused a malformed header; a valid one only shortens the route's deadline.
    const callerMs = timeoutHeader === undefined ? Infinity : Number(timeoutHeader);
    return RequestContexts.run({ ...current, deadline: Date.now() + Math.min(this.context.config.viewRpcTimeoutMs, callerMs) }, fn);
  }
}
