import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import { LifecycleSetPrincipalRevocation } from '@apphost/contracts';
import { RequireScopes, SCOPES } from '../auth';
import { parseInput } from '../http/request-input';
import { principalIdentityBodySchema, type PrincipalRevocationResponse } from './principals.schemas';

/**
 * `POST /v1/principals:revoke` and `POST /v1/principals:restore` (admin scope): durably revoke or restore a
 * principal in lifecycle-store. A revoked principal cannot open or use a View, and its live Views are revoked when
 * next touched. Both are idempotent (`changed` says whether the call changed anything).
 */
@Controller('v1')
@RequireScopes(SCOPES.admin)
export class PrincipalsController {
  constructor(@Inject(BusClient) private readonly bus: BusClient) {}

  @Post('principals\\:revoke')
  @HttpCode(200)
  revoke(@Body() body: unknown): Promise<PrincipalRevocationResponse> {
    return this.setRevoked(body, true);
  }

  @Post('principals\\:restore')
  @HttpCode(200)
  restore(@Body() body: unknown): Promise<PrincipalRevocationResponse> {
    return this.setRevoked(body, false);
  }

  private async setRevoked(body: unknown, revoked: boolean): Promise<PrincipalRevocationResponse> {
    const principal = parseInput(principalIdentityBodySchema, body ?? {}, 'request body');
    const state = await this.bus.request(LifecycleSetPrincipalRevocation, { principal, revoked });
    return { tenant: principal.tenant, subject: principal.subject, revoked: state.revoked, changed: state.changed, since: state.since };
  }
}
