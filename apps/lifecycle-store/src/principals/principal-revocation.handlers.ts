import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { LifecycleGetPrincipalRevocation, LifecycleSetPrincipalRevocation, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { PrincipalRevocationRepository } from './principal-revocation.repository';

/** Durable principal revocation, checked by the session authorizer at every View barrier. */
@Injectable()
export class PrincipalRevocationHandlers {
  constructor(@Inject(PrincipalRevocationRepository) private readonly revocations: PrincipalRevocationRepository) {}

  @BusHandler(LifecycleSetPrincipalRevocation)
  set(request: ParsedRequestOf<typeof LifecycleSetPrincipalRevocation>): Promise<ResponseOf<typeof LifecycleSetPrincipalRevocation>> {
    return request.revoked ? this.revocations.revoke(request.principal) : this.revocations.restore(request.principal);
  }

  @BusHandler(LifecycleGetPrincipalRevocation)
  get(request: ParsedRequestOf<typeof LifecycleGetPrincipalRevocation>): Promise<ResponseOf<typeof LifecycleGetPrincipalRevocation>> {
    return this.revocations.state(request.principal);
  }
}
