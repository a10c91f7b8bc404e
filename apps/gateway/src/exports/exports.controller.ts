import { Body, Controller, Get, Headers, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import { AppHostError, ExportAuditExport, ExportAuditListExports, ExportReasons, type ExportResponse, type Principal } from '@apphost/contracts';
import { CurrentPrincipal, RequireScopes } from '../auth';
import { HttpStatusError } from '../http/http-status-error';
import { ownSessionKey, parseInput } from '../http/request-input';
import { exportBodySchema, exportsQuerySchema } from './exports.schemas';

/** An export waits as long as the HTTP request's deadline allows. */
const EXPORT_TIMEOUT = { timeoutMs: 'until-deadline' } as const;

/**
 * `POST /v1/exports` (export scope): one purpose-bound export of a sealed result of the caller's own session, answered
 * as one materialized JSON body (never streamed, never HTML, never a View grant). `GET /v1/exports` (audit or admin
 * scope): the redacted audit rows of one session of the caller's tenant.
 */
@Controller('v1/exports')
export class ExportsController {
  constructor(@Inject(BusClient) private readonly bus: BusClient) {}

  @Post()
  @HttpCode(200)
  @RequireScopes('export')
  export(@CurrentPrincipal() principal: Principal, @Body() body: unknown, @Headers('accept') accept: string | undefined): Promise<ExportResponse> {
    if (typeof accept === 'string' && /text\/event-stream/i.test(accept))
      throw new HttpStatusError(406, 'INVALID_ARGUMENT', 'exports are one materialized JSON response; streaming is not supported', {
        details: ExportReasons.details('STREAMING_NOT_SUPPORTED'),
      });
    const input = parseInput(exportBodySchema, body ?? {}, 'request body');
    const session = ownSessionKey(principal, input.appName, input.sessionId, undefined);
    return this.bus.request(
      ExportAuditExport,
      { principal, session, eventId: input.eventId, functionCallId: input.functionCallId, operationId: input.operationId, projection: input.projection },
      EXPORT_TIMEOUT,
    );
  }

  @Get()
  list(@CurrentPrincipal() principal: Principal, @Query() query: unknown) {
    if (!principal.scopes.includes('audit') && !principal.scopes.includes('admin'))
      throw new AppHostError('PERMISSION_DENIED', 'missing required scope: audit (or admin)', { details: { requiredScopes: ['audit'] } });
    const q = parseInput(exportsQuerySchema, query, 'query');
    const session = { tenant: principal.tenant, appName: q.appName, userId: q.userId ?? principal.subject, sessionId: q.sessionId };
    return this.bus.request(ExportAuditListExports, { session, limit: q.limit });
  }
}
